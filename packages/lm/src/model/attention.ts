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
  const queries = tf.mul(applyRotary(q, ctx.cos, ctx.sin, ctx.rotation, ops), headDim ** -0.5) as tf.Tensor4D;
  if (past && queryLength === 1) {
    return {
      output: project(ctx, layer, "o_proj", decodeStepAttention(queries, keys, values, ctx), weights.linears.o_proj),
      present: { keys, values },
    };
  }
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

/**
 * One new token per row against its cache (a decode pass): the products as broadcast
 * multiplies and sums, a constant number of ops whatever the batch. The product ops walk
 * the batch item by item on wasm (matmul-ops.ts), a cost per row that a continuous batch
 * of hundreds of rows would pay every pass.
 */
function decodeStepAttention(queries: tf.Tensor4D, keys: tf.Tensor4D, values: tf.Tensor4D, ctx: ForwardContext): tf.Tensor2D {
  const { batch, config } = ctx;
  const { numHeads, numKvHeads, headDim } = config;
  const groups = numHeads / numKvHeads;
  const keyLength = keys.shape[2];
  const grouped = tf.reshape(queries, [batch, numKvHeads, groups, 1, headDim]);
  const scores = tf.sum(tf.mul(grouped, tf.expandDims(keys, 2)), 4); // [B, kv, g, keys]
  // By hand, not tf.softmax or the product ops: those group their sums (SIMD lanes on wasm,
  // blocks of 48 on cpu), so left padding changed a row's rounding; max, exp and Sum add
  // in order, and padding adds exact zeros (the continuous batch relies on it).
  const biased = tf.add(scores, tf.reshape(ctx.bias, [batch, 1, 1, keyLength]));
  const exps = tf.exp(tf.sub(biased, tf.max(biased, 3, true)));
  const weightsOfKeys = tf.div(exps, tf.sum(exps, 3, true));
  const attended = tf.sum(tf.mul(tf.expandDims(weightsOfKeys, 4), tf.expandDims(values, 2)), 3); // [B, kv, g, D]
  return tf.reshape(attended, [batch, numHeads * headDim]) as tf.Tensor2D;
}
