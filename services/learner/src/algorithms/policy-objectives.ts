// The policy term of each objective (clip, CISPO, SAPO) and which tokens its bounds stopped,
// in the [batch, C] layout of policy-loss.ts; the ratio is per token [b, C] or per sequence [b, 1].
import * as tf from "@tensorflow/tfjs-core";
import type { LossSettings } from "./loss-settings.js";

/**
 * The per-token policy term (before the rollout correction, KL and aggregation):
 * clip:  −min(r·A, clip(r, 1 − ε_low, 1 + ε_high)·A), r capped at δ first when set (PPO, INTELLECT-2);
 * cispo: −sg(min(r, ε_max))·A·log π (MiniMax-M1 arXiv 2506.13585 eq. 4 with ScaleRL's upper-only
 *        truncation, TRL loss_type="cispo": the weight is a constant, so every token keeps a gradient);
 * sapo:  −f(r)·A with f(r) = σ(τ(r − 1))·4/τ, τ = τ_pos for A > 0 else τ_neg (SAPO arXiv 2511.20347;
 *        TRL loss_type="sapo"): a soft trust region whose gradient f′(1) = 1 equals GRPO's on-policy.
 */
export function policyTerm(settings: LossSettings, ratio: tf.Tensor, logp: tf.Tensor2D, adv: tf.Tensor2D): tf.Tensor {
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
export function clippedTokens(
  settings: LossSettings,
  r: tf.Tensor,
  adv: tf.Tensor2D,
  liveMask: tf.Tensor2D,
): { low: tf.Tensor; high: tf.Tensor } {
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
