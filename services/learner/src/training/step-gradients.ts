// The gradient of one step's loss with respect to the LoRA weights, accumulated over
// micro-batches, and the sums behind the step's metrics. Old and reference logprobs are
// inputs (computed without gradient beforehand), so the same code serves the first and
// every replayed iteration (num_iterations) and the parity tests' fixed inputs.
import * as tf from "@tensorflow/tfjs-core";
import { dpoPairLoss, livePreferencePairs } from "../algorithms/dpo-term.js";
import type { LossSettings } from "../algorithms/loss-settings.js";
import { policyLoss } from "../algorithms/policy-loss.js";
import { sftLoss } from "../algorithms/sft-loss.js";
import { completionLogprobs } from "@lean-grpo/lm";
import type { LoraAdapter } from "@lean-grpo/lm";
import type { CausalLM } from "@lean-grpo/lm";
import { lossGradients } from "@lean-grpo/lm";
import { column, rightAligned } from "./aligned-tensors.js";
import { microBatches } from "./micro-batches.js";
import { lossMask, modelTokenCount } from "./model-tokens.js";
import type { PreparedBatch, PreparedRow } from "./prepared-batch.js";

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
  /** Reference logprobs per batch row; needed when beta ≠ 0 or the DPO term is on. */
  ref: readonly (readonly number[])[] | null;
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
}

export function stepGradients(inputs: StepGradientInputs): StepGradients {
  const { model, adapter, settings, batch } = inputs;
  const rowOf = new Map(batch.rows.map((row, i) => [row, i]));
  const out: StepGradients = {
    loss: 0,
    grads: new Map(),
    clipLow: 0,
    clipHigh: 0,
    clipRegion: 0,
    kl: null,
    entropy: 0,
    microBatches: 0,
    detachedLogprobs: null,
  };
  const detached: number[][] = [];
  // By length; groups whole only for DGPO's pair term (micro-batches.ts).
  const cut = { keepGroups: settings.dpoCoef !== 0, inArrivalOrder: inputs.formerStep };
  try {
    microBatches(batch.rows, inputs.microBatchTokens, cut).forEach((rows, k) => {
      out.microBatches += 1;
      const kept: tf.Tensor[] = [];
      const constants: tf.Tensor[] = [];
      const { value, grads } = lossGradients(() => {
        const scores = completionLogprobs(
          model,
          rows.map((r) => ({ promptIds: r.example.promptIds, completionIds: r.example.completionIds })),
          {
            temperature: settings.temperature,
            topK: settings.topK,
            topP: settings.topP,
            adapter,
            dropoutSeed: inputs.dropoutSeed?.(k),
            signal: inputs.signal,
          },
        );
        // Every sum below runs over the model's tokens only; the environment's conditioned the pass.
        const mask = lossMask(scores.mask, rows);
        kept.push(tf.keep(tf.sum(tf.mul(scores.entropies, mask))));
        if (batch.mode === "sft") return sftLoss(scores.logprobs, mask, batch.totals.tokens);
        return microBatchRlLoss(
          inputs,
          rows,
          rows.map((r) => rowOf.get(r)!),
          scores.logprobs,
          mask,
          kept,
          constants,
          detached,
        );
      }, adapter.variables());
      out.loss += value.dataSync()[0]!;
      value.dispose();
      for (const [name, grad] of Object.entries(grads)) {
        const key = adapter.peftKeyOfVariable(name)!;
        const sum = out.grads.get(key);
        if (sum) {
          out.grads.set(key, tf.add(sum, grad));
          tf.dispose([sum, grad]);
        } else {
          out.grads.set(key, grad);
        }
      }
      const [entropy, clipLow, clipHigh, clipRegion, kl] = kept.map((t) => t.dataSync()[0]!);
      out.entropy += entropy!;
      if (clipLow !== undefined) {
        out.clipLow += clipLow;
        out.clipHigh += clipHigh!;
        out.clipRegion += clipRegion!;
      }
      if (kl !== undefined) out.kl = (out.kl ?? 0) + kl;
      tf.dispose([...kept, ...constants]);
    });
  } catch (error) {
    tf.dispose([...out.grads.values()]);
    throw error;
  }
  if (batch.mode === "rl" && !inputs.old) out.detachedLogprobs = detached;
  return out;
}

function microBatchRlLoss(
  inputs: StepGradientInputs,
  rows: readonly PreparedRow[],
  batchRows: readonly number[],
  logp: tf.Tensor2D,
  mask: tf.Tensor2D,
  kept: tf.Tensor[],
  constants: tf.Tensor[],
  detached: number[][],
): tf.Scalar {
  const { settings, batch } = inputs;
  const window = logp.shape[1];
  // Constants need the pass's window C, so they are made here and kept until the pass ends.
  const constant = <T extends tf.Tensor>(t: T): T => {
    constants.push(tf.keep(t));
    return t;
  };
  const ref = inputs.ref
    ? constant(
        rightAligned(
          batchRows.map((i) => inputs.ref![i]!),
          window,
        ),
      )
    : null;
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
        : constant(onPolicyOld(logp, rows, batchRows, detached)),
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
  if (!ref) throw new Error("stepGradients: the DPO term needs reference logprobs");
  const pairs = livePreferencePairs(rows);
  const dpo = dpoPairLoss(logp, ref, mask, pairs, settings.dpoBeta, Math.max(1, batch.totals.pairs));
  return tf.add(terms.loss, tf.mul(dpo, settings.dpoCoef)) as tf.Scalar;
}

/**
 * The pass's own logprobs as a constant (a copy of the values, outside the tape: no
 * gradient), recorded per batch row for the step's metrics.
 */
function onPolicyOld(logp: tf.Tensor2D, rows: readonly PreparedRow[], batchRows: readonly number[], detached: number[][]): tf.Tensor2D {
  const values = logp.dataSync();
  const window = logp.shape[1];
  rows.forEach((r, k) => {
    const length = r.example.completionIds.length;
    detached[batchRows[k]!] = Array.from(values.subarray(k * window + window - length, (k + 1) * window));
  });
  return tf.tensor2d(values, logp.shape);
}
