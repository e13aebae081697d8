// The rollouts of one step: the step's batch of prompts, one group each (whole-proof or
// tactic mode), and with DAPO dynamic sampling the zero-variance groups dropped and the
// batch refilled from a second seeded order, up to max_refill_rounds. A pure function of
// (seed, step) and the adapter it samples with, so a resumed run redoes it exactly.
import type { TrainingSet } from "../../data/training-set.js";
import { DataOrder } from "./data-order.js";
import type { MeshClients } from "../mesh-clients.js";
import type { RunConfig } from "../config/run-config.js";
import { rolloutGroup, type RolloutContext, type RolloutGroup } from "./rollout.js";
import { repairRolloutGroup } from "./repair-rollout.js";
import { tacticRolloutGroup } from "./tactic-rollout.js";

/** An adapter loaded in the inference service ("" / 0: the base model). */
export interface AdapterRef {
  name: string;
  version: number;
}

export interface StepRollouts {
  step: number;
  /** The adapter every completion of the step was sampled with. */
  adapter: AdapterRef;
  /** Groups to train on (with dynamic sampling: those whose rewards differ). */
  groups: RolloutGroup[];
  /** Every group rolled out, dropped ones included: the step's reward and pass-rate metrics. */
  rolled: RolloutGroup[];
  dropped: number;
  /** performance.now() when the first group started and the last one ended. */
  startedAt: number;
  endedAt: number;
}

export interface RolloutPlan {
  clients: MeshClients;
  config: RunConfig;
  runId: string;
  theorems: TrainingSet;
  chatPrompts: boolean;
  /** Drop groups whose rewards all agree and refill the batch (usesDynamicSampling). */
  dynamicSampling: boolean;
}

/** The sampler seed of one group: a function of the run seed, the step and the group's slot. */
function groupSeed(seed: number, step: number, slot: number): number {
  return (seed * 1_000_003 + step * 4_099 + slot) >>> 0;
}

export class StepRolloutPlanner {
  private readonly order: DataOrder;
  private readonly refills: DataOrder;

  constructor(private readonly plan: RolloutPlan) {
    this.order = new DataOrder(plan.theorems.size, plan.config.training.seed);
    this.refills = new DataOrder(plan.theorems.size, plan.config.training.seed + 1);
  }

  async roll(step: number, adapter: AdapterRef, signal?: AbortSignal): Promise<StepRollouts> {
    const { config, theorems } = this.plan;
    const startedAt = performance.now();
    const ctx: RolloutContext = {
      clients: this.plan.clients,
      config,
      runId: this.plan.runId,
      step,
      adapter: adapter.name,
      chatPrompts: this.plan.chatPrompts,
      ...(signal ? { signal } : {}),
    };
    const rollGroup = { whole: rolloutGroup, tactic: tacticRolloutGroup, repair: repairRolloutGroup }[config.training.mode];
    const batchSize = config.training.batch_size;
    // Only the batch's records are read (a streamed set reads them from disk here).
    const roll = async (indices: number[], slotBase: number) => {
      const batch = await theorems.at(indices);
      return Promise.all(
        batch.map((theorem, i) =>
          rollGroup(ctx, theorem, `s${step}-g${slotBase + i}`, groupSeed(config.training.seed, step, slotBase + i)),
        ),
      );
    };

    let groups = await roll(this.order.batch(step, batchSize), 0);
    const rolled: RolloutGroup[] = [...groups];
    let dropped = 0;
    if (this.plan.dynamicSampling) {
      const hasSignal = (g: RolloutGroup) => g.rewards.some((r) => r !== g.rewards[0]);
      let kept = groups.filter(hasSignal);
      dropped = groups.length - kept.length;
      for (let round = 0; round < config.training.max_refill_rounds && kept.length < batchSize; round++) {
        const start = ((step - 1) * config.training.max_refill_rounds + round) * batchSize;
        const more = await roll(this.refills.slice(start, batchSize - kept.length), batchSize * (round + 1));
        rolled.push(...more);
        const useful = more.filter(hasSignal);
        dropped += more.length - useful.length;
        kept = [...kept, ...useful];
      }
      // No group with a learning signal even after the refills: this step trains nothing.
      groups = kept;
    }
    return { step, adapter, groups, rolled, dropped, startedAt, endedAt: performance.now() };
  }
}
