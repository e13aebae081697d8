// A typed front for tf.customGrad, whose own typing takes a variadic callback of
// tensors-or-save-function and returns a rank-less Tensor.
import * as tf from "@tensorflow/tfjs-core";

export interface CustomGradientResult<Out extends tf.Tensor> {
  value: Out;
  /** Gradient of every input, in order, given the output's gradient and the saved tensors. */
  gradFunc: (dy: Out, saved: tf.Tensor[]) => tf.Tensor | tf.Tensor[];
}

export function customGradient<Inputs extends tf.Tensor[], Out extends tf.Tensor>(
  f: (...args: [...Inputs, tf.GradSaveFunc]) => CustomGradientResult<Out>,
): (...inputs: Inputs) => Out {
  return tf.customGrad(f as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (...inputs: Inputs) => Out;
}
