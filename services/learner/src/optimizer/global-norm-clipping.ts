// Gradient clipping by the global L2 norm over all tensors, as
// torch.nn.utils.clip_grad_norm_: scale = min(1, max_norm / (norm + 1e-6)).
import * as tf from "@tensorflow/tfjs-core";

export interface ClippedGradients {
  /** Gradients after clipping, by the same keys (new tensors; the caller disposes). */
  grads: Map<string, tf.Tensor>;
  /** The norm before clipping. */
  norm: number;
}

export function clipByGlobalNorm(grads: ReadonlyMap<string, tf.Tensor>, maxNorm: number | null): ClippedGradients {
  const squares = tf.tidy(() => tf.addN([...grads.values()].map((g) => tf.sum(tf.square(g)))));
  const norm = Math.sqrt(squares.dataSync()[0]!);
  squares.dispose();
  const scale = maxNorm === null ? 1 : Math.min(1, maxNorm / (norm + 1e-6));
  const clipped = new Map<string, tf.Tensor>();
  for (const [key, grad] of grads) clipped.set(key, scale === 1 ? grad.clone() : tf.mul(grad, scale));
  return { grads: clipped, norm };
}
