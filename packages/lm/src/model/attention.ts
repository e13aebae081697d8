// Grouped-query self-attention with RoPE, optional q/k RMSNorm (Qwen3) and a KV cache.
//
// GQA without repeating K and V: q [B, nH, T, D] is viewed as [B, nKV, g·T, D] (heads
// j·g … j·g+g−1 are contiguous), which pairs each query head with kv head ⌊h/g⌋ exactly
// as HF's repeat_kv does, at no extra memory.
import * as tf from "@tensorflow/tfjs-core";
import { project, type ForwardContext } from "./forward-context.js";
import type { LayerWeights } from "./model-weights.js";
import { rmsNorm } from "./rms-norm.js";
import { applyRotary } from "./rotary-embedding.js";

/** One layer's keys (after RoPE) and values: [batch, kv_heads, keyLength, head_dim]. */
export interface KeyValue {
  keys: tf.Tensor4D;
  values: tf.Tensor4D;
}

/** [B·T, heads·D] to [B, heads, T, D], with the per-head norm applied before the transpose. */
function splitHeads(x: tf.Tensor2D, ctx: ForwardContext, heads: number, norm: tf.Tensor1D | null): tf.Tensor4D {
  const { batch, queryLength, config } = ctx;
  let perHead = tf.reshape(x, [batch, queryLength, heads, config.headDim]) as tf.Tensor4D;
  if (norm) perHead = rmsNorm(perHead, norm, config.rmsNormEps);
  return tf.transpose(perHead, [0, 2, 1, 3]);
}

export function selfAttention(
  x: tf.Tensor2D,
  layer: number,
  weights: LayerWeights,
  ctx: ForwardContext,
  past: KeyValue | null,
): { output: tf.Tensor2D; present: KeyValue } {
  const { batch, queryLength, config, ops } = ctx;
  const { numHeads, numKvHeads, headDim } = config;
  const groups = numHeads / numKvHeads;
  const q = splitHeads(project(ctx, layer, "q_proj", x, weights.linears.q_proj), ctx, numHeads, weights.qNorm);
  let keys = splitHeads(project(ctx, layer, "k_proj", x, weights.linears.k_proj), ctx, numKvHeads, weights.kNorm);
  let values = splitHeads(project(ctx, layer, "v_proj", x, weights.linears.v_proj), ctx, numKvHeads, null);
  keys = applyRotary(keys, ctx.cos, ctx.sin, ctx.rotation, ops);
  if (past) {
    keys = tf.concat([past.keys, keys], 2);
    values = tf.concat([past.values, values], 2);
  }
  const keyLength = keys.shape[2];
  // Scaling q (T·D values) is cheaper than scaling the scores (T·T values).
  const queries = tf.mul(applyRotary(q, ctx.cos, ctx.sin, ctx.rotation, ops), headDim ** -0.5);
  const grouped = tf.reshape(queries, [batch * numKvHeads, groups * queryLength, headDim]) as tf.Tensor3D;
  const flatKeys = tf.reshape(keys, [batch * numKvHeads, keyLength, headDim]) as tf.Tensor3D;
  const flatValues = tf.reshape(values, [batch * numKvHeads, keyLength, headDim]) as tf.Tensor3D;
  const scores = tf.reshape(ops.batchMatMul(grouped, flatKeys, false, true), [batch, numKvHeads, groups, queryLength, keyLength]);
  const weightsOfKeys = tf.reshape(tf.softmax(tf.add(scores, ctx.bias)), [
    batch * numKvHeads,
    groups * queryLength,
    keyLength,
  ]) as tf.Tensor3D;
  const attended = tf.reshape(ops.batchMatMul(weightsOfKeys, flatValues), [batch, numHeads, queryLength, headDim]);
  const merged = tf.reshape(tf.transpose(attended, [0, 2, 1, 3]), [batch * queryLength, numHeads * headDim]) as tf.Tensor2D;
  return { output: project(ctx, layer, "o_proj", merged, weights.linears.o_proj), present: { keys, values } };
}
