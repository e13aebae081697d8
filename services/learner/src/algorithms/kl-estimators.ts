// Per-token estimators of KL(π_θ ‖ π_ref) from samples of π_θ (Schulman, "Approximating
// KL"; grpo-math §5.1). d = ref − logp is clamped to ±20 before exp, a guard that changes
// nothing below that and keeps inf·0 = NaN out of the loss (grpo-math §14.3).
import * as tf from "@tensorflow/tfjs-core";
import type { KlEstimator } from "./loss-settings.js";

export function klEstimate(logp: tf.Tensor2D, ref: tf.Tensor2D, estimator: KlEstimator): tf.Tensor2D {
  return tf.tidy(() => {
    const diff = tf.sub(logp, ref); // logp − ref = −d
    switch (estimator) {
      case "k1":
        return diff as tf.Tensor2D;
      case "k2":
        return tf.mul(tf.square(diff), 0.5) as tf.Tensor2D;
      case "abs":
        return tf.abs(diff) as tf.Tensor2D;
      case "k3": {
        const d = tf.clipByValue(tf.neg(diff), -20, 20);
        return tf.sub(tf.sub(tf.exp(d), d), 1) as tf.Tensor2D;
      }
    }
  });
}
