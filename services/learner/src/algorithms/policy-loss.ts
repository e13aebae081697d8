// The clipped-surrogate loss of the GRPO family on one micro-batch (grpo-math §4.1, §4.2, §6,
// §9, §10.2, §10.6, §15.3), in the [batch, C] right-aligned layout of completionLogprobs.
//
// Each micro-batch's loss is its share of the whole step's loss: denominators (sequence
// count, token count) are those of the whole batch, so summing micro-batch gradients gives
// exactly the full-batch gradient, whatever the token budget cuts.
import * as tf from "@tensorflow/tfjs-core";
import { klEstimate } from "./kl-estimators.js";
import type { LossSettings } from "./loss-settings.js";
import { clippedTokens, policyTerm } from "./policy-objectives.js";
import { LOG_RATIO_BOUND, rolloutCorrectionWeights } from "./rollout-correction.js";

export interface PolicyLossInputs {
  /** [b, C] current-policy logprobs (carry gradient); 0 off the completion. */
  logp: tf.Tensor2D;
  /** [b, C] 1 on the model's completion tokens, 0 on the environment's (completion_mask) and on padding: every sum and count below runs over it. */
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
  /** [b, 1] the model's token count of each row (its length for every normaliser). */
  lengths: tf.Tensor2D;
}

/** Sizes of the whole step's batch (after dynamic sampling), the loss's denominators. */
export interface BatchTotals {
  sequences: number;
  /** The model's tokens (completion_mask true) of live rows. */
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
