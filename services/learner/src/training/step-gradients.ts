// The gradient of one step's loss with respect to the LoRA weights: the step's rows cut into
// micro-batches (micro-batches.ts), each micro-batch's share computed (micro-batch-gradients.ts,
// here on this thread or spread over worker threads by gradient-threads.ts), and the shares
// added in micro-batch order, so the sum is the same whichever thread computed which share.
// Old and reference logprobs are inputs (computed without gradient beforehand) or, for the
// reference, scored inside each micro-batch; the same code serves the first and every
// replayed iteration (num_iterations) and the parity tests' fixed inputs.
import * as tf from "@tensorflow/tfjs-core";
import type { LossSettings } from "../algorithms/loss-settings.js";
import type { CausalLM, LoraAdapter } from "@lean-grpo/lm";
import { microBatchGradients, type MicroBatchShare, type MicroBatchTask, type PassInputs } from "./micro-batch-gradients.js";
import { microBatches } from "./micro-batches.js";
import type { PreparedBatch } from "./prepared-batch.js";

export interface StepGradientInputs {
  model: CausalLM;
  adapter: LoraAdapter;
  settings: LossSettings;
  batch: PreparedBatch;
  /**
   * Logprobs before the update, one array per batch row (RL). Null in RL: on-policy, the
   * old policy is the current one, and the detached logprobs of this pass stand in for it.
   */
  old: readonly (readonly number[])[] | null;
  /** Reference logprobs per batch row; needed when beta ≠ 0 or the DPO term is on, unless `scoreReference`. */
  ref: readonly (readonly number[])[] | null;
  /** Score the reference inside each micro-batch (`ref` null); the result carries them. */
  scoreReference?: boolean;
  microBatchTokens: number;
  /** Micro-batches cut as before issue 26 (LearnerOptions.formerStep). */
  formerStep?: boolean;
  /** Seed of LoRA dropout for micro-batch k; absent means no dropout. */
  dropoutSeed?: (microBatch: number) => number;
  signal?: AbortSignal;
}

export interface StepGradients {
  loss: number;
  /** Summed gradient of each LoRA tensor, by PEFT key (the caller disposes). */
  grads: Map<string, tf.Tensor>;
  /** Sums over live tokens. */
  clipLow: number;
  clipHigh: number;
  clipRegion: number;
  kl: number | null;
  entropy: number;
  microBatches: number;
  /** With `old` null in RL: the detached logprobs of this pass, per batch row (they were "old"). */
  detachedLogprobs: number[][] | null;
  /** With `scoreReference`: the reference logprobs scored in the pass, per batch row. */
  referenceLogprobs: number[][] | null;
}

/** The pass's shared inputs, as a worker thread receives them. */
export function passInputs(inputs: StepGradientInputs): PassInputs {
  return {
    settings: inputs.settings,
    batch: inputs.batch,
    old: inputs.old,
    ref: inputs.ref,
    scoreReference: inputs.scoreReference === true && inputs.ref === null,
  };
}

/** The step's micro-batches in the order their shares are added. */
export function microBatchTasks(inputs: StepGradientInputs): MicroBatchTask[] {
  const rowOf = new Map(inputs.batch.rows.map((row, i) => [row, i]));
  // By length; groups whole only for DGPO's pair term (micro-batches.ts).
  const cut = { keepGroups: inputs.settings.dpoCoef !== 0, inArrivalOrder: inputs.formerStep };
  return microBatches(inputs.batch.rows, inputs.microBatchTokens, cut).map((rows, index) => ({
    index,
    rows: rows.map((r) => rowOf.get(r)!),
    ...(inputs.dropoutSeed ? { dropoutSeed: inputs.dropoutSeed(index) } : {}),
  }));
}

/** Every share on this thread, one micro-batch after another. */
export function stepGradients(inputs: StepGradientInputs): StepGradients {
  const pass = passInputs(inputs);
  const shares: MicroBatchShare[] = [];
  try {
    for (const task of microBatchTasks(inputs)) {
      inputs.signal?.throwIfAborted();
      shares.push(microBatchGradients(inputs.model, inputs.adapter, pass, task, inputs.signal));
    }
  } catch (error) {
    for (const share of shares) tf.dispose([...share.grads.values()]);
    throw error;
  }
  return sumShares(shares, pass);
}

/** The step's sums from its micro-batches' shares, added in micro-batch order (disposes the shares' gradients). */
export function sumShares(unordered: readonly MicroBatchShare[], pass: PassInputs): StepGradients {
  const shares = [...unordered].sort((a, b) => a.index - b.index);
  const rows = pass.batch.rows.length;
  const out: StepGradients = {
    loss: 0,
    grads: new Map(),
    clipLow: 0,
    clipHigh: 0,
    clipRegion: 0,
    kl: null,
    entropy: 0,
    microBatches: shares.length,
    detachedLogprobs: pass.batch.mode === "rl" && !pass.old ? new Array<number[]>(rows) : null,
    referenceLogprobs: pass.scoreReference ? new Array<number[]>(rows) : null,
  };
  for (const share of shares) {
    out.loss += share.loss;
    for (const [key, grad] of share.grads) {
      const sum = out.grads.get(key);
      if (sum) {
        out.grads.set(key, tf.add(sum, grad));
        tf.dispose([sum, grad]);
      } else {
        out.grads.set(key, grad);
      }
    }
    out.entropy += share.entropy;
    out.clipLow += share.clipLow;
    out.clipHigh += share.clipHigh;
    out.clipRegion += share.clipRegion;
    if (share.kl !== null) out.kl = (out.kl ?? 0) + share.kl;
    for (const [row, logprobs] of share.detached ?? []) out.detachedLogprobs![row] = logprobs;
    for (const [row, logprobs] of share.reference ?? []) out.referenceLogprobs![row] = logprobs;
  }
  return out;
}
