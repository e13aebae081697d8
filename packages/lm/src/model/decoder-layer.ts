// One pre-norm decoder block: x + attention(norm(x)), then x + mlp(norm(x)), where the MLP
// is SwiGLU, down(silu(gate(x)) · up(x)).
import * as tf from "@tensorflow/tfjs-core";
import { selfAttention, type KeyValue } from "./attention.js";
import { project, type ForwardContext } from "./forward-context.js";
import type { LayerWeights } from "./model-weights.js";
import { rmsNorm } from "./rms-norm.js";

export function decoderLayer(
  x: tf.Tensor2D,
  layer: number,
  weights: LayerWeights,
  ctx: ForwardContext,
  past: KeyValue | null,
): { hidden: tf.Tensor2D; present: KeyValue } {
  const eps = ctx.config.rmsNormEps;
  const attention = selfAttention(rmsNorm(x, weights.inputNorm, eps), layer, weights, ctx, past);
  const afterAttention = tf.add(x, attention.output) as tf.Tensor2D;
  const h = rmsNorm(afterAttention, weights.postAttentionNorm, eps);
  const gate = project(ctx, layer, "gate_proj", h, weights.linears.gate_proj);
  const up = project(ctx, layer, "up_proj", h, weights.linears.up_proj);
  const activated = tf.mul(tf.mul(gate, tf.sigmoid(gate)), up) as tf.Tensor2D;
  const mlp = project(ctx, layer, "down_proj", activated, weights.linears.down_proj);
  return { hidden: tf.add(afterAttention, mlp) as tf.Tensor2D, present: attention.present };
}
