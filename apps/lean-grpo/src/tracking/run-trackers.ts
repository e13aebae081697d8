// The trackers of one run, fed from the WatchRun stream of `lean-grpo train`. Tracking never
// stops or slows a run: each tracker has its own queue that the stream only appends to, a
// tracker that fails is dropped with one warning in the run's log, and the end of the run
// waits for the trackers at most FINISH_TIMEOUT_MS.
import type { Run, StepEvent } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RunOutputs, type EvalRecord } from "@lean-grpo/orchestrator";
import type { Tracker, TrackedRun, TrackedStep } from "./tracker.js";
import type { TrackingConfig } from "./tracking-config.js";
import { TensorBoardTracker } from "./tensorboard/tensorboard-tracker.js";
import { WandbTracker } from "./wandb/wandb-tracker.js";

export const FINISH_TIMEOUT_MS = 15_000;

export interface RunTrackers {
  step(event: StepEvent): void;
  finish(final: Run): Promise<void>;
}

export interface TrackersContext extends TrackedRun {
  warn: (message: string) => void;
  env?: NodeJS.ProcessEnv;
  finishTimeoutMs?: number;
}

export function startTrackers(config: TrackingConfig, context: TrackersContext): RunTrackers {
  const trackers = config.trackers.map(
    (name): Tracker => (name === "tensorboard" ? new TensorBoardTracker() : new WandbTracker(config, context.env ?? process.env)),
  );
  return new TrackerQueues(trackers, context);
}

/** Each tracker's operations in order, on a chain of its own; the first failure drops the tracker. */
class TrackerQueues implements RunTrackers {
  private readonly chains: Promise<void>[];
  private readonly dropped = new Set<number>();
  private readonly evalsSent: Set<number>[];
  private readonly outputs: RunOutputs;

  constructor(
    private readonly trackers: Tracker[],
    private readonly context: TrackersContext,
  ) {
    this.outputs = new RunOutputs(context.runDir);
    this.chains = trackers.map(() => Promise.resolve());
    this.evalsSent = trackers.map(() => new Set());
    const run: TrackedRun = { runId: context.runId, runDir: context.runDir, name: context.name, config: context.config };
    this.each((t) => t.start(run));
  }

  /**
   * A step, with the held-out evaluations written since: those of earlier steps first (the one
   * before step 1 arrives with step 1's event), since a tracker's history runs in step order and
   * W&B drops a row below its latest step; the step's own after it, to join its row.
   */
  step(event: StepEvent): void {
    const step = trackedStep(event);
    this.each(async (tracker, i) => {
      const evals = await this.newEvals(i);
      for (const record of evals.filter((r) => r.step < step.step)) await this.sendEval(tracker, i, record);
      await tracker.step(step);
      for (const record of evals.filter((r) => r.step >= step.step)) await this.sendEval(tracker, i, record);
    });
  }

  async finish(final: Run): Promise<void> {
    this.sendNewEvals();
    const failed = final.state === RunState.FAILED;
    this.each((t) => t.finish(failed));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.context.finishTimeoutMs ?? FINISH_TIMEOUT_MS);
    });
    const settled = new Set<number>();
    const all = Promise.all(this.chains.map((chain, i) => chain.then(() => settled.add(i)))).then(() => "done" as const);
    const outcome = await Promise.race([all, timeout]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      const waiting = this.trackers.filter((_, i) => !settled.has(i)).map((t) => t.label);
      this.context.warn(
        `tracking: stopped waiting for ${waiting.join(", ")} after ${(this.context.finishTimeoutMs ?? FINISH_TIMEOUT_MS) / 1000} s; the run itself is complete`,
      );
    }
  }

  /** Held-out evaluations the run has written since each tracker's last look (eval.jsonl), in step order. */
  private sendNewEvals(): void {
    this.each(async (tracker, i) => {
      for (const record of await this.newEvals(i)) await this.sendEval(tracker, i, record);
    });
  }

  private async newEvals(index: number): Promise<EvalRecord[]> {
    const sent = this.evalsSent[index]!;
    const records = await this.outputs.readEvals().catch(() => [] as EvalRecord[]);
    return records.filter((r) => !sent.has(r.step)).sort((a, b) => a.step - b.step);
  }

  private async sendEval(tracker: Tracker, index: number, record: EvalRecord): Promise<void> {
    this.evalsSent[index]!.add(record.step);
    await tracker.evaluation(record);
  }

  private each(op: (tracker: Tracker, index: number) => Promise<void>): void {
    this.trackers.forEach((tracker, i) => {
      this.chains[i] = this.chains[i]!.then(async () => {
        if (this.dropped.has(i)) return;
        try {
          await op(tracker, i);
        } catch (error) {
          this.dropped.add(i);
          this.context.warn(
            `tracking: ${tracker.label} failed and is off for the rest of the run (the run goes on): ${(error as Error).message}`,
          );
        }
      });
    });
  }
}

function trackedStep(event: StepEvent): TrackedStep {
  const t = event.timings;
  const timings: Record<string, number> = t
    ? {
        generate_s: t.generateS,
        verify_s: t.verifyS,
        score_s: t.scoreS,
        train_s: t.trainS,
        sync_s: t.syncS,
        other_s: t.otherS,
        total_s: t.totalS,
        rollout_overlap_s: t.rolloutOverlapS,
      }
    : {};
  return {
    step: Number(event.step),
    metrics: { ...event.metrics },
    timings,
    samples: event.samples.map((s) => ({
      theoremId: s.theoremId,
      prompt: s.prompt,
      completion: s.completion,
      reward: s.reward,
      solved: s.solved,
    })),
  };
}
