// What every layer of one forward pass shares, and the adapted linear projection.
import * as tf from "@tensorflow/tfjs-core";
import type { MatMulOps } from "../backend/matmul-ops.js";
import type { LoraAdapter } from "../lora/lora-adapter.js";
import type { ModelConfig } from "./model-config.js";
import type { LinearWeights } from "./model-weights.js";
import type { LinearModule } from "./weight-names.js";

export interface ForwardContext {
  config: ModelConfig;
  ops: MatMulOps;
  /** The policy's adapter, or null for the reference (base) model. */
  adapter: LoraAdapter | null;
  /** Seed of the LoRA dropout masks; undefined means no dropout (inference, scoring). */
  dropoutSeed: number | undefined;
  batch: number;
  /** New tokens per row in this pass. */
  queryLength: number;
  /** RoPE tables [batch, 1, queryLength, head_dim] for the new tokens. */
  cos: tf.Tensor4D;
  sin: tf.Tensor4D;
  /** rotate_half as a matrix (see rotateHalfMatrix). */
  rotation: tf.Tensor2D;
  /** Additive attention bias [batch, 1, 1, queryLength, keyLength]. */
  bias: tf.Tensor;
}

/** x·W + b, plus the adapter's delta when the module carries one. x: [tokens, in]. */
export function project(ctx: ForwardContext, layer: number, module: LinearModule, x: tf.Tensor2D, weights: LinearWeights): tf.Tensor2D {
  return tf.tidy(() => {
    let y = ctx.ops.linear(x, weights.weight);
    if (weights.bias) y = tf.add(y, weights.bias);
    // Each module draws its own dropout mask, as PEFT's per-module Dropout does.
    const seed = ctx.dropoutSeed === undefined ? undefined : `${ctx.dropoutSeed}:${layer}:${module}`;
    const delta = ctx.adapter?.delta(layer, module, x, ctx.ops, seed);
    return delta ? tf.add(y, delta) : y;
  });
}
