// RMSNorm as Qwen and Llama compute it: x·rsqrt(mean(x²) + eps)·w over the last axis.
import * as tf from "@tensorflow/tfjs-core";

export function rmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, eps: number): T {
  return tf.tidy(() => {
    const meanSquare = tf.mean(tf.square(x), -1, true);
    return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight) as T;
  });
}
