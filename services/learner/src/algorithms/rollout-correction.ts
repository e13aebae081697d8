// Rollout correction: the sampler (vLLM, another kernel, bf16, a LoRA that may not have
// loaded, or in an async run the policy one version behind) is not the policy being trained,
// so each completion's loss is weighted by w = π_old / π_sampler, as TRL and verl do it:
//   level token:    w_t = exp(old_t − sampler_t)
//   level sequence: w   = exp(Σ_t (old_t − sampler_t))          (TRL sequence_*, verl rollout_is=sequence)
//   action truncate: w ← clamp(w, min, cap)                       (TRL *_truncate, verl TIS)
//   action mask:     w ← 0 where w > cap or w < min               (TRL *_mask, verl rollout_rs)
// Rows without sampler logprobs keep weight 1. The log ratio is bounded at ±20 before exp
// (verl's SAFETY_BOUND). TRL: trl/trainer/grpo_trainer.py (_generate_and_score_completions);
// verl: verl/trainer/ppo/rollout_corr_helper.py (compute_rollout_correction_weights).
import * as tf from "@tensorflow/tfjs-core";
import type { LossSettings } from "./loss-settings.js";

export const LOG_RATIO_BOUND = 20;

/** [b, C] (token) or [b, 1] (sequence) weights; `known` is [b, 1], 1 where the row has sampler logprobs. */
export function rolloutCorrectionWeights(
  settings: LossSettings,
  old: tf.Tensor2D,
  sampler: tf.Tensor2D,
  known: tf.Tensor2D,
  mask: tf.Tensor2D,
): tf.Tensor2D {
  const cap = settings.importanceSamplingCap;
  if (cap === null) throw new Error("rolloutCorrectionWeights: the correction is off (importance_sampling_cap is null)");
  const logRatio = tf.mul(tf.sub(old, sampler), mask);
  const level = settings.importanceSamplingLevel === "sequence" ? tf.sum(logRatio, 1, true) : logRatio;
  const raw = tf.exp(tf.clipByValue(level, -LOG_RATIO_BOUND, LOG_RATIO_BOUND));
  const min = settings.importanceSamplingMin;
  let weight: tf.Tensor;
  if (settings.importanceSamplingAction === "truncate") {
    weight = tf.clipByValue(raw, min ?? 0, cap);
  } else {
    const outside = min !== null ? tf.logicalOr(tf.greater(raw, cap), tf.less(raw, min)) : tf.greater(raw, cap);
    weight = tf.where(outside, tf.zerosLike(raw), raw);
  }
  return tf.add(tf.mul(weight, known), tf.sub(1, known)) as tf.Tensor2D;
}

/** One completion's sampler logprobs beside the learner's logprobs before the update. */
export interface SampledRow {
  old: readonly number[];
  sampler: readonly number[];
}

const bounded = (x: number) => Math.min(LOG_RATIO_BOUND, Math.max(-LOG_RATIO_BOUND, x));

/**
 * The weights rolloutCorrectionWeights gives one row, per token (a sequence weight repeated),
 * with the raw (bounded) weight beside them, for the metrics; with the correction off, the raw
 * token-level ratios.
 */
export function rowCorrection(settings: LossSettings, row: SampledRow): { raw: number[]; applied: number[] } {
  const logRatios = row.old.map((o, t) => o - row.sampler[t]!);
  const cap = settings.importanceSamplingCap;
  // With the correction off, the metrics describe the token-level ratios.
  const raw =
    cap !== null && settings.importanceSamplingLevel === "sequence"
      ? logRatios.map(() => Math.exp(bounded(logRatios.reduce((a, b) => a + b, 0))))
      : logRatios.map((d) => Math.exp(bounded(d)));
  if (cap === null) return { raw, applied: raw };
  const min = settings.importanceSamplingMin;
  const applied = raw.map((w) => {
    if (settings.importanceSamplingAction === "truncate") return Math.min(cap, Math.max(min ?? 0, w));
    return w > cap || (min !== null && w < min) ? 0 : w;
  });
  return { raw, applied };
}

/**
 * verl's rollout_corr metrics between sampler and learner ("/" written "_"), over the tokens of
 * rows with sampler logprobs; null when no row has them. verl: compute_offpolicy_metrics and
 * compute_is_metrics in verl/trainer/ppo/rollout_corr_helper.py.
 */
export function rolloutCorrectionMetrics(settings: LossSettings, rows: readonly SampledRow[]): Record<string, number> | null {
  const withTokens = rows.filter((r) => r.old.length > 0);
  if (withTokens.length === 0) return null;
  let tokens = 0;
  let kl = 0;
  let k3 = 0;
  let rho2 = 0;
  let seqRho2 = 0;
  let pplRatio = 0;
  let weightSum = 0;
  let weightSquares = 0;
  let masked = 0;
  let high = 0;
  let low = 0;
  const cap = settings.importanceSamplingCap;
  const min = settings.importanceSamplingMin;
  for (const row of withTokens) {
    const n = row.old.length;
    let logRatioSum = 0;
    let oldSum = 0;
    let samplerSum = 0;
    row.old.forEach((o, t) => {
      const s = row.sampler[t]!;
      const d = o - s;
      kl += s - o;
      k3 += Math.exp(d) - d - 1;
      rho2 += Math.exp(2 * bounded(d));
      logRatioSum += d;
      oldSum += o;
      samplerSum += s;
    });
    seqRho2 += Math.exp(2 * bounded(logRatioSum));
    // Per-sequence perplexity ratio learner / sampler = exp(mean sampler − mean old).
    pplRatio += Math.exp(samplerSum / n - oldSum / n);
    const { raw, applied } = rowCorrection(settings, row);
    applied.forEach((w, t) => {
      weightSum += w;
      weightSquares += w * w;
      if (cap !== null) {
        if (raw[t]! > cap) high += 1;
        if (min !== null && raw[t]! < min) low += 1;
        if (settings.importanceSamplingAction === "mask" && w === 0) masked += 1;
      }
    });
    tokens += n;
  }
  const sequences = withTokens.length;
  const metrics: Record<string, number> = {
    rollout_corr_kl: kl / tokens,
    rollout_corr_k3_kl: k3 / tokens,
    rollout_corr_chi2_token: rho2 / tokens - 1,
    rollout_corr_chi2_seq: seqRho2 / sequences - 1,
    rollout_corr_ppl_ratio: pplRatio / sequences,
    // Normalised ESS of the weights the loss applies: (Σw)² / (N Σw²) = 1 / mean((w / mean w)²).
    rollout_corr_rollout_is_eff_sample_size: weightSquares > 0 ? (weightSum * weightSum) / (tokens * weightSquares) : 0,
  };
  if (cap !== null) {
    metrics.rollout_corr_rollout_is_ratio_fraction_high = high / tokens;
    metrics.rollout_corr_rollout_is_ratio_fraction_low = low / tokens;
    metrics.rollout_corr_rollout_rs_masked_fraction = masked / tokens;
  }
  return metrics;
}
