// One micro-batch's share of a step: its loss, the gradient of that loss with respect to
// the LoRA weights, and the sums behind the step's metrics. A micro-batch's share depends
// only on the pass's inputs and its own rows, so it comes out the same on whichever thread
// computes it (gradient-threads.ts); the step adds the shares in micro-batch order
// (step-gradients.ts), so a step is the same on one thread or several.
import * as tf from "@tensorflow/tfjs-core";
import { dpoPairLoss, livePreferencePairs } from "../algorithms/dpo-term.js";
import type { LossSettings } from "../algorithms/loss-settings.js";
import { policyLoss } from "../algorithms/policy-loss.js";
import { sftLoss } from "../algorithms/sft-loss.js";
import { completionLogprobs, lossGradients, type CausalLM, type LoraAdapter, type ReasoningMaskMode } from "@lean-grpo/lm";
import { column, rightAligned, rowsOfRightAligned } from "./aligned-tensors.js";
import { lossMask, modelTokenCount } from "./model-tokens.js";
import type { PreparedBatch, PreparedRow } from "./prepared-batch.js";

/** What every micro-batch of one differentiated pass shares: plain data, so a worker thread can take it. */
export interface PassInputs {
  settings: LossSettings;
  batch: PreparedBatch;
  /**
   * Logprobs before the update, one array per batch row (RL). Null in RL: on-policy, the
   * old policy is the current one, and the detached logprobs of this pass stand in for it.
   */
  old: readonly (readonly number[])[] | null;
  /** Reference logprobs per batch row, when scored beforehand (replayed iterations, the former step). */
  ref: readonly (readonly number[])[] | null;
  /**
   * Score the reference model on each micro-batch's rows just before its differentiated pass
   * (β ≠ 0 or the DPO term, and `ref` null): the same rows in the same order as a separate
   * reference pass over the same cut, so the same values, but spread over the threads.
   */
  scoreReference: boolean;
}

/** One micro-batch: its place in the step's order and its rows (indices into batch.rows). */
export interface MicroBatchTask {
  index: number;
  rows: number[];
  /** Seed of LoRA dropout for this micro-batch; absent means no dropout. */
  dropoutSeed?: number;
}

export interface MicroBatchShare {
  index: number;
  loss: number;
  /** Gradient of each LoRA tensor (learner layout), by PEFT key; the caller disposes them. */
  grads: Map<string, tf.Tensor>;
  entropy: number;
  clipLow: number;
  clipHigh: number;
  clipRegion: number;
  kl: number | null;
  /** With `old` null in RL: this pass's detached logprobs, by batch row. */
  detached: Map<number, number[]> | null;
  /** With `scoreReference`: the reference logprobs scored here, by batch row. */
  reference: Map<number, number[]> | null;
}

export function microBatchGradients(
  model: CausalLM,
  adapter: LoraAdapter,
  inputs: PassInputs,
  task: MicroBatchTask,
  signal?: AbortSignal,
): MicroBatchShare {
  const { settings, batch } = inputs;
  const rows = task.rows.map((i) => batch.rows[i]!);
  const sequences = rows.map((r) => ({ promptIds: r.example.promptIds, completionIds: r.example.completionIds }));
  const distribution = {
    temperature: settings.temperature,
    topK: settings.topK,
    topP: settings.topP,
    reasoningMask: settings.reasoningMask,
  };
  const reference = inputs.scoreReference ? referenceLogprobs(model, sequences, task.rows, distribution, signal) : null;
  const refRows = inputs.ref ? task.rows.map((i) => inputs.ref![i]!) : reference ? task.rows.map((i) => reference.get(i)!) : null;
  const share: MicroBatchShare = {
    index: task.index,
    loss: 0,
    grads: new Map(),
    entropy: 0,
    clipLow: 0,
    clipHigh: 0,
    clipRegion: 0,
    kl: null,
    detached: batch.mode === "rl" && !inputs.old ? new Map() : null,
    reference: null,
  };
  const kept: tf.Tensor[] = [];
  const constants: tf.Tensor[] = [];
  try {
    const { value, grads } = lossGradients(() => {
      const scores = completionLogprobs(model, sequences, { ...distribution, adapter, dropoutSeed: task.dropoutSeed, signal });
      // Every sum below runs over the model's tokens only; the environment's conditioned the pass.
      const mask = lossMask(scores.mask, rows);
      kept.push(tf.keep(tf.sum(tf.mul(scores.entropies, mask))));
      if (batch.mode === "sft") return sftLoss(scores.logprobs, mask, batch.totals.tokens);
      return rlLoss(inputs, rows, task.rows, refRows, scores.logprobs, mask, kept, constants, share.detached);
    }, adapter.variables());
    share.loss = value.dataSync()[0]!;
    value.dispose();
    for (const [name, grad] of Object.entries(grads)) share.grads.set(adapter.peftKeyOfVariable(name)!, grad);
    const [entropy, clipLow, clipHigh, clipRegion, kl] = kept.map((t) => t.dataSync()[0]!);
    share.entropy = entropy!;
    if (clipLow !== undefined) {
      share.clipLow = clipLow;
      share.clipHigh = clipHigh!;
      share.clipRegion = clipRegion!;
    }
    if (kl !== undefined) share.kl = kl;
  } finally {
    tf.dispose([...kept, ...constants]);
  }
  share.reference = reference;
  return share;
}

/** The reference (adapter off) logprobs of the task's rows, without gradient, by batch row. */
function referenceLogprobs(
  model: CausalLM,
  sequences: { promptIds: number[]; completionIds: number[] }[],
  batchRows: readonly number[],
  distribution: { temperature: number; topK: number; topP: number; reasoningMask?: ReasoningMaskMode },
  signal: AbortSignal | undefined,
): Map<number, number[]> {
  const scores = completionLogprobs(model, sequences, { ...distribution, adapter: null, signal });
  try {
    return rowsOfRightAligned(scores.logprobs.dataSync(), scores.logprobs.shape[1], scores.lengths, batchRows);
  } finally {
    tf.dispose([scores.logprobs, scores.entropies, scores.mask]);
  }
}

function rlLoss(
  inputs: PassInputs,
  rows: readonly PreparedRow[],
  batchRows: readonly number[],
  refRows: readonly (readonly number[])[] | null,
  logp: tf.Tensor2D,
  mask: tf.Tensor2D,
  kept: tf.Tensor[],
  constants: tf.Tensor[],
  detached: Map<number, number[]> | null,
): tf.Scalar {
  const { settings, batch } = inputs;
  const window = logp.shape[1];
  // Constants need the pass's window C, so they are made here and kept until the pass ends.
  const constant = <T extends tf.Tensor>(t: T): T => {
    constants.push(tf.keep(t));
    return t;
  };
  const ref = refRows ? constant(rightAligned(refRows, window)) : null;
  const known = rows.map((r) => (r.example.samplerLogprobs ? 1 : 0));
  const sampler =
    settings.importanceSamplingCap !== null && known.some((k) => k === 1)
      ? {
          logprobs: constant(
            rightAligned(
              rows.map((r) => r.example.samplerLogprobs ?? []),
              window,
            ),
          ),
          known: constant(column(known)),
        }
      : null;
  const terms = policyLoss(
    settings,
    {
      logp,
      mask,
      old: inputs.old
        ? constant(
            rightAligned(
              batchRows.map((i) => inputs.old![i]!),
              window,
            ),
          )
        : constant(onPolicyOld(logp, rows, batchRows, detached!)),
      ref,
      sampler,
      advantages: constant(column(rows.map((r) => r.advantage))),
      live: constant(column(rows.map((r) => (r.live ? 1 : 0)))),
      lengths: constant(column(rows.map((r) => modelTokenCount(r.example)))),
    },
    { sequences: batch.totals.sequences, liveTokens: batch.totals.liveTokens },
  );
  kept.push(terms.clipLow, terms.clipHigh, terms.clipRegion);
  if (terms.kl) kept.push(terms.kl);
  if (settings.dpoCoef === 0) return terms.loss;
  if (!ref) throw new Error("microBatchGradients: the DPO term needs reference logprobs");
  const pairs = livePreferencePairs(rows);
  const dpo = dpoPairLoss(logp, ref, mask, pairs, settings.dpoBeta, Math.max(1, batch.totals.pairs));
  return tf.add(terms.loss, tf.mul(dpo, settings.dpoCoef)) as tf.Scalar;
}

/**
 * The pass's own logprobs as a constant (a copy of the values, outside the tape: no
 * gradient), recorded per batch row for the step's metrics.
 */
function onPolicyOld(
  logp: tf.Tensor2D,
  rows: readonly PreparedRow[],
  batchRows: readonly number[],
  detached: Map<number, number[]>,
): tf.Tensor2D {
  const values = logp.dataSync();
  const lengths = rows.map((r) => r.example.completionIds.length);
  for (const [row, logprobs] of rowsOfRightAligned(values, logp.shape[1], lengths, batchRows)) detached.set(row, logprobs);
  return tf.tensor2d(values, logp.shape);
}
