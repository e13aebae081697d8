// The loop of one run, from the step after `startStep` to `training.steps`: sample a
// batch, roll out each group, (DAPO) drop zero-variance groups and refill, TrainStep
// on the learner, sync the new adapter to the inference service, record metrics, and
// checkpoint every N steps; with an `eval` section, held-out greedy accuracy before the
// first step and every N steps. Stops between steps when asked.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { TrainingMode, type TrainStepRequestSchema } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { syncAdapter } from "./adapter-sync.js";
import { DataOrder } from "./data-order.js";
import type { MeshClients } from "./mesh-clients.js";
import { usesDynamicSampling, type RunConfig } from "./run-config.js";
import { evaluatesAt, heldoutAccuracy } from "./heldout-eval.js";
import type { EvalRecord, RunOutputs, StepRecord } from "./run-outputs.js";
import { usesChatPrompts } from "./prompts.js";
import { rolloutGroup, type RolloutContext, type RolloutGroup } from "./rollout.js";
import { inSpan, runAttributes } from "./tracing.js";

export interface LoopOptions {
  runId: string;
  config: RunConfig;
  theorems: readonly Theorem[];
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

/** The sampler seed of one group: a function of the run seed, the step and the group's slot. */
function groupSeed(seed: number, step: number, slot: number): number {
  return (seed * 1_000_003 + step * 4_099 + slot) >>> 0;
}

export async function runLoop(options: LoopOptions, startStep: number): Promise<number> {
  const { config, clients } = options;
  const chatPrompts = await usesChatPrompts(config.prompt.format, clients);
  const order = new DataOrder(options.theorems.length, config.training.seed);
  const refills = new DataOrder(options.theorems.length, config.training.seed + 1);
  let adapter = options.adapter;
  let adapterVersion = options.adapterVersion;
  let step = startStep;
  const heldout = { clients, config, theorems: options.heldout, chatPrompts, ...(options.signal ? { signal: options.signal } : {}) };
  const evaluate = async (after: number, with_: string) => {
    const record = await inSpan("heldout.eval", runAttributes(options.runId, after), () => heldoutAccuracy(heldout, after, with_));
    await options.onEval(record);
    return record;
  };
  if (step === 0 && options.heldout.length > 0 && evaluatesAt(config, 0)) await evaluate(0, adapter);
  while (step < config.training.steps && !options.stopRequested()) {
    const next = step + 1;
    await inSpan("rollout.step", runAttributes(options.runId, next), async () => {
      const stepStart = performance.now();
      const ctx: RolloutContext = { clients, config, runId: options.runId, step: next, adapter, chatPrompts, ...(options.signal ? { signal: options.signal } : {}) };
      const batchSize = config.training.batch_size;
      const roll = (indices: number[], slotBase: number) =>
        Promise.all(indices.map((index, i) => rolloutGroup(ctx, options.theorems[index]!, `s${next}-g${slotBase + i}`, groupSeed(config.training.seed, next, slotBase + i))));

      let groups = await roll(order.batch(next, batchSize), 0);
      const rolled: RolloutGroup[] = [...groups];
      let dropped = 0;
      if (usesDynamicSampling(config)) {
        const hasSignal = (g: RolloutGroup) => g.rewards.some((r) => r !== g.rewards[0]);
        let kept = groups.filter(hasSignal);
        dropped = groups.length - kept.length;
        for (let round = 0; round < config.training.max_refill_rounds && kept.length < batchSize; round++) {
          const start = ((next - 1) * config.training.max_refill_rounds + round) * batchSize;
          const more = await roll(refills.slice(start, batchSize - kept.length), batchSize * (round + 1));
          rolled.push(...more);
          const useful = more.filter(hasSignal);
          dropped += more.length - useful.length;
          kept = [...kept, ...useful];
        }
        // No group with a learning signal even after the refills: this step trains nothing.
        groups = kept;
      }

      const trainStart = performance.now();
      let trained: { adapterVersion: bigint; metrics: Record<string, number> } | undefined;
      if (groups.length > 0) {
        trained = await inSpan("learner.step", runAttributes(options.runId, next), () =>
          clients.withRetry("learner", () => clients.learner.trainStep(trainingStream(options, groups), { signal: options.signal }), options.signal),
        );
      }
      const syncStart = performance.now();
      if (trained) {
        const version = trained.adapterVersion;
        const synced = await inSpan("adapter.sync", { ...runAttributes(options.runId, next), "leangrpo.adapter_version": Number(version) }, () =>
          clients.withRetry("inference", () => syncAdapter(clients, version, options.outputs.adaptersDir, options.signal), options.signal),
        );
        adapter = synced.name;
        adapterVersion = Number(version);
      }
      const end = performance.now();

      const all = rolled.flatMap((g) => g.rewards);
      const solved = rolled.flatMap((g) => g.solved);
      const mean = all.reduce((a, b) => a + b, 0) / all.length;
      const generateS = rolled.reduce((a, g) => a + g.generateS, 0) / Math.max(1, rolled.length);
      const verifyS = rolled.reduce((a, g) => a + g.verifyS, 0) / Math.max(1, rolled.length);
      const scoreS = rolled.reduce((a, g) => a + g.scoreS, 0) / Math.max(1, rolled.length);
      const rolloutS = (trainStart - stepStart) / 1000;
      // Groups run concurrently: split the rollout wall time by each phase's share of it.
      const share = generateS + verifyS + scoreS > 0 ? rolloutS / (generateS + verifyS + scoreS) : 0;
      const timings = {
        generate_s: generateS * share,
        verify_s: verifyS * share,
        score_s: scoreS * share,
        train_s: (syncStart - trainStart) / 1000,
        sync_s: (end - syncStart) / 1000,
        other_s: 0,
        total_s: (end - stepStart) / 1000,
      };
      timings.other_s = Math.max(0, timings.total_s - timings.generate_s - timings.verify_s - timings.score_s - timings.train_s - timings.sync_s);
      const metrics: Record<string, number> = {
        ...trained?.metrics,
        reward_mean: mean,
        reward_std: Math.sqrt(all.reduce((a, r) => a + (r - mean) ** 2, 0) / Math.max(1, all.length - 1)),
        pass_rate: solved.filter(Boolean).length / Math.max(1, solved.length),
        groups_trained: groups.length,
        trained: trained ? 1 : 0,
        groups_dropped: dropped,
      };
      // Evaluation time is its own (eval.jsonl), outside the step's timings.
      if (options.heldout.length > 0 && evaluatesAt(config, next)) metrics.heldout_accuracy = (await evaluate(next, adapter)).heldout_accuracy;
      step = next;
      await options.onStep({ step, time: new Date().toISOString(), adapter_version: adapterVersion, metrics, timings });
      if (step % config.training.checkpoint_every === 0 || step === config.training.steps) await options.onCheckpoint(step);
    });
  }
  return step;
}

async function* trainingStream(options: LoopOptions, groups: readonly RolloutGroup[]): AsyncGenerator<MessageInitShape<typeof TrainStepRequestSchema>> {
  const samples = groups.flatMap((g) => g.completions.map((c, i) => ({ group: g, completion: c, reward: g.rewards[i] ?? 0 })));
  yield {
    part: {
      case: "header",
      value: {
        algorithm: options.config.algorithm.name,
        algorithmConfig: options.config.algorithm.config as Record<string, never>,
        mode: TrainingMode.RL,
        runId: options.runId,
        // 0 skips the learner's step-order check: a DAPO step may train nothing, so run
        // steps and learner steps can differ; resume restores both from the checkpoint.
        step: 0n,
        expectedSamples: samples.length,
        numGenerations: options.config.training.num_generations,
      },
    },
  };
  for (const { group, completion, reward } of samples) {
    yield {
      part: {
        case: "sample",
        value: {
          groupId: group.groupId,
          promptTokenIds: group.promptTokenIds,
          completionTokenIds: completion.tokenIds,
          samplerLogprobs: completion.logprobs,
          reward,
          truncated: completion.finishReason === 2,
          policyVersion: completion.policyVersion,
          sampleId: `${group.groupId}/${completion.index}`,
        },
      },
    };
  }
}
