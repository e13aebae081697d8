// Supervised fine-tuning on completion tokens (warm starts): the mean cross-entropy
// −log p over every completion token of the step; this micro-batch's share of it.
import * as tf from "@tensorflow/tfjs-core";

export function sftLoss(logp: tf.Tensor2D, mask: tf.Tensor2D, totalTokens: number): tf.Scalar {
  return tf.div(tf.neg(tf.sum(tf.mul(logp, mask))), Math.max(1, totalTokens)) as tf.Scalar;
}
