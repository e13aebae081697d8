// The loop of one run, from the step after `startStep` to `training.steps`: roll out the
// step's batch (step-rollouts.ts: whole-proof or tactic mode, DAPO refills), TrainStep on
// the learner, sync the new adapter to the inference service and check that it took
// (adapter-check.ts), record metrics, and
// checkpoint every N steps; with an `eval` section, held-out greedy accuracy before the
// first step and every N steps. Stops between steps when asked.
//
// training.async: once step k's rollouts are in hand, step k+1's start (with the adapter
// loaded now, step k−1's) while step k trains and syncs; step k+1 then trains on them. The
// pipeline never drains at checkpoints: a resumed run reloads the adapter the step after its
// checkpoint was sampled with (lagged-adapter.ts) and redoes that step's rollouts, so it
// repeats the uninterrupted run's data, seeds and adapters step for step.
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { TrainingSet } from "../../data/training-set.js";
import { context } from "@opentelemetry/api";
import { adapterCheckThreshold, checkAdapterTookEverywhere } from "./adapter-check.js";
import { syncAdapter } from "./adapter-sync.js";
import { evaluatesAt, heldoutAccuracy } from "./heldout-eval.js";
import { adapterAfterStep } from "./lagged-adapter.js";
import type { MeshClients } from "../mesh-clients.js";
import { versionFromProto } from "@lean-grpo/adapter-files";
import { usesChatPrompts } from "../rollout/prompts.js";
import { PrefetchedRollouts } from "../rollout/rollout-prefetch.js";
import type { RunConfig } from "../config/run-config.js";
import type { EvalRecord } from "../outputs/eval-record.js";
import type { RunOutputs, StepRecord } from "../outputs/run-outputs.js";
import { heldoutMetrics, stepMetrics, stepTimings } from "../outputs/step-record.js";
import { keptSamples } from "./step-samples.js";
import { sampledPromptText } from "../rollout/sampled-prompt.js";
import { StepRolloutPlanner, type AdapterRef, type StepRollouts } from "../rollout/step-rollouts.js";
import { StepSpan } from "../outputs/step-span.js";
import { inSpan, runAttributes } from "../outputs/tracing.js";
import { sampleCount, trainingStream } from "./training-stream.js";

export interface LoopOptions {
  runId: string;
  config: RunConfig;
  /** Drop groups whose rewards all agree and refill the batch (decided at StartRun from the learner's algorithm). */
  dynamicSampling: boolean;
  theorems: TrainingSet;
  clients: MeshClients;
  outputs: RunOutputs;
  /** Adapter the first step samples with ("" for the base model). */
  adapter: string;
  adapterVersion: number;
  /** Held-out problems of the `eval` section (empty: no evaluation). */
  heldout: readonly Theorem[];
  stopRequested(): boolean;
  onEval(record: EvalRecord): Promise<void>;
  onStep(record: StepRecord): Promise<void>;
  onCheckpoint(step: number): Promise<void>;
  signal?: AbortSignal;
}

export async function runLoop(options: LoopOptions, startStep: number): Promise<number> {
  const { config, clients, signal } = options;
  const chatPrompts = await usesChatPrompts(config.prompt.format, clients);
  const planner = new StepRolloutPlanner({
    clients,
    config,
    runId: options.runId,
    theorems: options.theorems,
    chatPrompts,
    dynamicSampling: options.dynamicSampling,
  });
  const parent = context.active();
  let current: AdapterRef = { name: options.adapter, version: options.adapterVersion };
  let step = startStep;
  const heldout = { clients, config, theorems: options.heldout, chatPrompts, ...(signal ? { signal } : {}) };
  const evaluate = async (after: number, adapterName: string) => {
    const record = await inSpan("heldout.eval", runAttributes(options.runId, after), () => heldoutAccuracy(heldout, after, adapterName));
    await options.onEval(record);
    return record;
  };
  const prefetch = (next: number, adapter: AdapterRef) =>
    new PrefetchedRollouts(
      next,
      StepSpan.start(parent, options.runId, next),
      (prefetchSignal) => planner.roll(next, adapter, prefetchSignal),
      signal,
    );

  // The adapter check's probe: the run's first prompt (adapter-check.ts).
  const adapterCheck = await adapterCheckThreshold(clients, config, signal);
  const first = options.theorems.checked[0];
  const probe = first ? { theorem: first, chatPrompts } : undefined;

  if (step === 0 && options.heldout.length > 0 && evaluatesAt(config, 0)) await evaluate(0, current.name);
  let pending: PrefetchedRollouts | undefined;
  try {
    // A resumed async run: the step after the checkpoint samples with the adapter before it, as it did.
    if (config.training.async && step > 0 && step < config.training.steps && !options.stopRequested()) {
      pending = prefetch(step + 1, await adapterAfterStep(clients, options.outputs, step - 1, signal));
    }
    while (step < config.training.steps && !options.stopRequested()) {
      const next = step + 1;
      const stepStart = performance.now();
      const span = pending?.step === next ? pending.span : StepSpan.start(parent, options.runId, next);
      try {
        await span.run(async () => {
          let rollouts: StepRollouts;
          if (pending?.step === next) {
            const taken = pending;
            pending = undefined;
            rollouts = await taken.take();
          } else {
            rollouts = await planner.roll(next, current, signal);
          }
          const rolloutsReady = performance.now();
          if (config.training.async && next < config.training.steps && !options.stopRequested()) pending = prefetch(next + 1, current);

          const trainedFromVersion = current.version;
          const samples = sampleCount(rollouts.groups);
          let trained: { adapterVersion: bigint; metrics: Record<string, number> } | undefined;
          if (samples > 0) {
            trained = await inSpan("learner.step", runAttributes(options.runId, next), () =>
              clients.withRetry(
                "learner",
                () => clients.learner.trainStep(trainingStream(options.runId, config, rollouts.groups), { signal }),
                signal,
              ),
            );
          }
          const syncStart = performance.now();
          let adapterCheckDifference: number | undefined;
          if (trained) {
            const version = versionFromProto(trained.adapterVersion);
            const synced = await inSpan(
              "adapter.sync",
              { ...runAttributes(options.runId, next), "leangrpo.adapter_version": version },
              () => clients.withRetry("inference", () => syncAdapter(clients, trained.adapterVersion, options.outputs, signal), signal),
            );
            current = { name: synced.name, version: synced.version };
            if (adapterCheck !== null && probe) {
              const checked = await inSpan(
                "adapter.check",
                { ...runAttributes(options.runId, next), "leangrpo.adapter_version": version },
                () => checkAdapterTookEverywhere(clients, config, probe, current, adapterCheck, signal),
              );
              adapterCheckDifference = checked?.meanDifference;
            }
          }
          const end = performance.now();

          const metrics = stepMetrics({
            rollouts,
            trained: trained?.metrics,
            trainedFromVersion,
            samplesSent: trained ? samples : 0,
            tactic: config.training.mode === "tactic",
          });
          if (adapterCheckDifference !== undefined) metrics.adapter_check_logp_difference = adapterCheckDifference;
          const timings = stepTimings(rollouts, { stepStart, rolloutsReady, syncStart, end });
          // Evaluation time is its own (eval.jsonl), outside the step's timings.
          if (options.heldout.length > 0 && evaluatesAt(config, next))
            Object.assign(metrics, heldoutMetrics(await evaluate(next, current.name)));
          step = next;
          // A few completions to read, from every group rolled out (dropped ones too: they show what the policy writes).
          const readable = rollouts.rolled.flatMap((g) => (g.readable ? [g.readable] : []));
          const kept = await keptSamples(readable, config.report.samples_per_step, (prompt) => sampledPromptText(clients, prompt, signal));
          await options.onStep({ step, time: new Date().toISOString(), adapter_version: current.version, metrics, timings, samples: kept });
          if (step % config.training.checkpoint_every === 0 || step === config.training.steps) await options.onCheckpoint(step);
        });
        span.end();
      } catch (error) {
        span.end({ error });
        throw error;
      }
    }
  } finally {
    // Stopping or failing with the next step's rollouts under way: cancel them, wait for them to settle.
    await pending?.cancel();
  }
  return step;
}
