// The clipped-surrogate loss of the GRPO family on one micro-batch (grpo-math §4.1, §4.2, §6,
// §9, §10.2, §10.6, §15.3), in the [batch, C] right-aligned layout of completionLogprobs.
//
// Each micro-batch's loss is its share of the whole step's loss: denominators (sequence
// count, token count) are those of the whole batch, so summing micro-batch gradients gives
// exactly the full-batch gradient, whatever the token budget cuts.
import * as tf from "@tensorflow/tfjs-core";
import { klEstimate } from "./kl-estimators.js";
import type { LossSettings } from "./loss-settings.js";
import { LOG_RATIO_BOUND, rolloutCorrectionWeights } from "./rollout-correction.js";

export interface PolicyLossInputs {
  /** [b, C] current-policy logprobs (carry gradient); 0 off the mask. */
  logp: tf.Tensor2D;
  /** [b, C] 1 on completion tokens. */
  mask: tf.Tensor2D;
  /** [b, C] logprobs before the update (constants). */
  old: tf.Tensor2D;
  /** [b, C] reference logprobs (adapter disabled); needed when beta ≠ 0. */
  ref: tf.Tensor2D | null;
  /** [b, C] sampler logprobs, with [b, 1] 1 where a row has them; needed for the rollout correction (importance_sampling_cap). */
  sampler: { logprobs: tf.Tensor2D; known: tf.Tensor2D } | null;
  /** [b, 1] advantage of each row. */
  advantages: tf.Tensor2D;
  /** [b, 1] 0 for rows masked out of the loss (truncated, with mask_truncated_completions). */
  live: tf.Tensor2D;
  /** [b, 1] completion length of each row. */
  lengths: tf.Tensor2D;
}

/** Sizes of the whole step's batch (after dynamic sampling), the loss's denominators. */
export interface BatchTotals {
  sequences: number;
  /** Tokens of live rows. */
  liveTokens: number;
}

export interface PolicyLossTerms {
  loss: tf.Scalar;
  /** Sums over live tokens, for the clip-ratio and KL metrics (kept; the caller disposes). */
  clipLow: tf.Scalar;
  clipHigh: tf.Scalar;
  clipRegion: tf.Scalar;
  kl: tf.Scalar | null;
}

export function policyLoss(settings: LossSettings, inputs: PolicyLossInputs, totals: BatchTotals): PolicyLossTerms {
  const { logp, mask, old, advantages: adv } = inputs;
  const liveMask = tf.mul(mask, inputs.live) as tf.Tensor2D;
  const logRatio = tf.clipByValue(tf.sub(logp, old), -LOG_RATIO_BOUND, LOG_RATIO_BOUND);
  // Token ratios [b, C], or one length-normalised sequence ratio per row [b, 1] (GSPO).
  const ratio = settings.level === "sequence" ? tf.exp(tf.div(tf.sum(tf.mul(logRatio, mask), 1, true), inputs.lengths)) : tf.exp(logRatio);
  let perToken = policyTerm(settings, ratio, logp, adv);
  if (settings.importanceSamplingCap !== null && inputs.sampler) {
    perToken = tf.mul(perToken, rolloutCorrectionWeights(settings, old, inputs.sampler.logprobs, inputs.sampler.known, mask));
  }
  let kl: tf.Tensor2D | null = null;
  if (inputs.ref) kl = klEstimate(logp, inputs.ref, settings.klEstimator);
  if (settings.beta !== 0) {
    if (!kl) throw new Error("policyLoss: beta ≠ 0 needs reference logprobs");
    perToken = tf.add(perToken, tf.mul(kl, settings.beta));
  }
  const masked = tf.mul(perToken, liveMask);
  let loss: tf.Scalar;
  switch (settings.aggregation) {
    case "seq-mean-token-mean": {
      const liveLengths = tf.maximum(tf.mul(inputs.lengths, inputs.live), 1);
      loss = tf.div(tf.sum(tf.div(tf.sum(masked, 1, true), liveLengths)), totals.sequences);
      break;
    }
    case "token-mean":
      loss = tf.div(tf.sum(masked), Math.max(1, totals.liveTokens));
      break;
    case "seq-mean-token-sum-norm":
      loss = tf.div(tf.sum(masked), totals.sequences * settings.maxCompletionLength);
      break;
  }
  const { low, high } = clippedTokens(settings, tf.mul(tf.onesLike(logp), ratio), adv, liveMask);
  // Kept past the caller's tidy (lossGradients) so that metrics outlive the backward pass.
  return {
    loss,
    clipLow: tf.keep(tf.sum(low)),
    clipHigh: tf.keep(tf.sum(high)),
    clipRegion: tf.keep(tf.sum(tf.minimum(tf.add(low, high), 1))),
    kl: kl ? tf.keep(tf.sum(tf.mul(kl, liveMask)) as tf.Scalar) : null,
  };
}

/**
 * The per-token policy term (before the rollout correction, KL and aggregation):
 * clip:  −min(r·A, clip(r, 1 − ε_low, 1 + ε_high)·A), r capped at δ first when set (PPO, INTELLECT-2);
 * cispo: −sg(min(r, ε_max))·A·log π (MiniMax-M1 arXiv 2506.13585 eq. 4 with ScaleRL's upper-only
 *        truncation, TRL loss_type="cispo": the weight is a constant, so every token keeps a gradient);
 * sapo:  −f(r)·A with f(r) = σ(τ(r − 1))·4/τ, τ = τ_pos for A > 0 else τ_neg (SAPO arXiv 2511.20347;
 *        TRL loss_type="sapo"): a soft trust region whose gradient f′(1) = 1 equals GRPO's on-policy.
 */
function policyTerm(settings: LossSettings, ratio: tf.Tensor, logp: tf.Tensor2D, adv: tf.Tensor2D): tf.Tensor {
  switch (settings.objective) {
    case "clip": {
      const capped = settings.delta !== null ? tf.minimum(ratio, settings.delta) : ratio;
      const clipped = tf.clipByValue(ratio, 1 - settings.epsilonLow, 1 + settings.epsilonHigh);
      return tf.neg(tf.minimum(tf.mul(capped, adv), tf.mul(clipped, adv)));
    }
    case "cispo": {
      const truncated = tf.minimum(ratio, settings.cispoRatioCap);
      // A copy of the values, outside the tape: the stop-gradient.
      const weight = tf.tensor(truncated.dataSync(), truncated.shape);
      return tf.neg(tf.mul(tf.mul(weight, adv), logp));
    }
    case "sapo": {
      const positive = tf.cast(tf.greater(adv, 0), "float32");
      const tau = tf.add(
        tf.mul(positive, settings.sapoTemperaturePositive - settings.sapoTemperatureNegative),
        settings.sapoTemperatureNegative,
      );
      const gate = tf.div(tf.mul(tf.sigmoid(tf.mul(tau, tf.sub(ratio, 1))), 4), tau);
      return tf.neg(tf.mul(gate, adv));
    }
  }
}

/**
 * Tokens whose ratio a bound stopped (live tokens only): the clip's low (r < 1 − ε_low, A < 0) and
 * high (r > 1 + ε_high, A > 0) sides; CISPO's truncation (r > ε_max, either sign) as high; none for SAPO.
 */
function clippedTokens(settings: LossSettings, r: tf.Tensor, adv: tf.Tensor2D, liveMask: tf.Tensor2D): { low: tf.Tensor; high: tf.Tensor } {
  const where = (condition: tf.Tensor) => tf.mul(tf.cast(condition, "float32"), liveMask);
  switch (settings.objective) {
    case "clip":
      return {
        low: where(tf.logicalAnd(tf.less(r, 1 - settings.epsilonLow), tf.less(adv, 0))),
        high: where(tf.logicalAnd(tf.greater(r, 1 + settings.epsilonHigh), tf.greater(adv, 0))),
      };
    case "cispo":
      return { low: tf.zerosLike(r), high: where(tf.greater(r, settings.cispoRatioCap)) };
    case "sapo":
      return { low: tf.zerosLike(r), high: tf.zerosLike(r) };
  }
}
