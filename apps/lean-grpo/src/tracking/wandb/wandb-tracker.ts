// Weights & Biases, with seed 003's logging.mode: online sends the run as it goes (wandb-api.ts;
// WANDB_API_KEY as W&B's own clients read it), offline writes runs/<id>/wandb/offline-run-*/
// for W&B's `wandb sync` to upload later (transaction-log.ts). Each step is a history row
// (train/<metric>, time/<timing>, samples/text), each held-out evaluation one too (eval/...), and
// the resolved config is the run's config.
import { RunOutputs, type EvalRecord } from "@lean-grpo/orchestrator";
import { samplesMarkdown, type Tracker, type TrackedRun, type TrackedStep } from "../tracker.js";
import type { TrackingConfig } from "../tracking-config.js";
import { WandbApi, type WandbRunRef } from "./wandb-api.js";
import { OfflineRun } from "./transaction-log.js";

export class WandbTracker implements Tracker {
  readonly label: string;
  private readonly started = Date.now();
  private summary: Record<string, unknown> = {};
  private online: { api: WandbApi; ref: WandbRunRef } | undefined;
  private offline: OfflineRun | undefined;
  /** Rows the online run has not sent yet (a failed send keeps them for the next). */
  private pending: Record<string, unknown>[] = [];
  /** The row of the latest step, until a later step closes it. */
  private open: { step: number; values: Record<string, unknown> } | undefined;

  constructor(
    private readonly config: TrackingConfig,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.label = `W&B (${config.mode})`;
  }

  async start(run: TrackedRun): Promise<void> {
    const id = wandbRunId(run.runId);
    if (this.config.mode === "offline") {
      const outputs = new RunOutputs(run.runDir);
      const createFile = (relative: string) => outputs.open((dir) => dir.createFile(`wandb/${relative}`), true);
      this.offline = await OfflineRun.create(createFile, {
        runId: id,
        project: this.config.project,
        ...(this.config.entity ? { entity: this.config.entity } : {}),
        displayName: run.name,
        config: run.config,
        startTime: new Date(this.started),
      });
      return;
    }
    const key = this.env.WANDB_API_KEY;
    if (!key)
      throw new Error(
        "logging.mode=online needs WANDB_API_KEY (from wandb.ai/authorize); logging.mode=offline writes the run to upload later",
      );
    const api = new WandbApi(this.config.baseUrl, key);
    const ref = await api.upsertRun({
      name: id,
      project: this.config.project,
      ...(this.config.entity ? { entity: this.config.entity } : {}),
      displayName: run.name,
      config: run.config,
    });
    this.online = { api, ref };
  }

  async step(step: TrackedStep): Promise<void> {
    await this.row(step.step, {
      ...prefixed("train", step.metrics),
      ...prefixed("time", step.timings),
      ...(step.samples.length > 0 ? { "samples/text": samplesMarkdown(step.samples) } : {}),
    });
  }

  async evaluation(record: EvalRecord): Promise<void> {
    await this.row(record.step, {
      "eval/heldout_accuracy": record.heldout_accuracy,
      "eval/solved": record.solved,
      "eval/problems": record.problems,
    });
  }

  async finish(failed: boolean): Promise<void> {
    await this.close();
    const code = failed ? 1 : 0;
    if (this.offline) {
      this.offline.summary(this.summary);
      this.offline.exit(code, (Date.now() - this.started) / 1000);
      await this.offline.close();
    } else if (this.online) {
      if (this.pending.length > 0) await this.flush();
      await this.online.api.finish(this.online.ref, code);
    }
  }

  /**
   * W&B's history is one row per step, steps increasing: the row of a step stays open until a
   * later step arrives, so that the held-out evaluation after a step joins its row.
   */
  private async row(step: number, values: Record<string, unknown>): Promise<void> {
    if (this.open && this.open.step === step) {
      Object.assign(this.open.values, values);
      return;
    }
    if (this.open && step < this.open.step) return;
    await this.close();
    this.open = { step, values: { ...values } };
  }

  private async close(): Promise<void> {
    if (!this.open) return;
    const { step, values } = this.open;
    this.open = undefined;
    const row = { ...values, _step: step, _runtime: (Date.now() - this.started) / 1000, _timestamp: Date.now() / 1000 };
    const { _step, ...summary } = row;
    this.summary = { ...this.summary, ...summary };
    if (this.offline) this.offline.history(step, row);
    else {
      this.pending.push(row);
      await this.flush();
    }
  }

  private async flush(): Promise<void> {
    const rows = this.pending;
    await this.online!.api.log(this.online!.ref, rows, this.summary);
    this.pending = this.pending.slice(rows.length);
  }
}

/** W&B run ids may not hold / \ # ? % : (and are at most 64 characters here). */
export function wandbRunId(runId: string): string {
  return runId.replace(/[/\\#?%:\s]/g, "-").slice(0, 64);
}

function prefixed(prefix: string, values: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [`${prefix}/${k}`, v]));
}
