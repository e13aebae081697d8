// Rotary position embeddings with the rotate_half convention (emb = cat(freqs, freqs), not
// interleaved), and the llama3 rescaling of the inverse frequencies. The angles are
// computed in JS in float32, as HF and vLLM do, and only then become tensors.
import * as tf from "@tensorflow/tfjs-core";
import type { MatMulOps } from "../backend/matmul-ops.js";
import type { ModelConfig } from "./model-config.js";

const f32 = Math.fround;

/** inv_freq[i] = theta^(-2i/d), rescaled for llama3 (modeling_rope_utils._compute_llama3_parameters). */
export function inverseFrequencies(config: ModelConfig): Float32Array {
  const dim = config.headDim;
  const inv = new Float32Array(dim / 2);
  for (let i = 0; i < dim / 2; i++) inv[i] = f32(1 / f32(config.ropeTheta ** f32((2 * i) / dim)));
  const scaling = config.ropeScaling;
  if (!scaling) return inv;
  const lowFreqWavelen = scaling.originalMaxPositionEmbeddings / scaling.lowFreqFactor;
  const highFreqWavelen = scaling.originalMaxPositionEmbeddings / scaling.highFreqFactor;
  for (let i = 0; i < inv.length; i++) {
    const freq = inv[i]!;
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < highFreqWavelen) continue; // high frequencies are kept
    if (wavelen > lowFreqWavelen) {
      inv[i] = f32(freq / scaling.factor); // low frequencies are divided by the factor
    } else {
      // In between, interpolate smoothly between the two.
      const smooth =
        (scaling.originalMaxPositionEmbeddings / wavelen - scaling.lowFreqFactor) / (scaling.highFreqFactor - scaling.lowFreqFactor);
      inv[i] = f32((1 - smooth) * (freq / scaling.factor) + smooth * freq);
    }
  }
  return inv;
}

/** cos and sin tables [batch, 1, length, head_dim] for the given positions (row-major [batch, length]). */
export function rotaryTables(
  inverseFrequency: Float32Array,
  positions: Int32Array,
  batch: number,
  length: number,
): { cos: tf.Tensor4D; sin: tf.Tensor4D } {
  const half = inverseFrequency.length;
  const dim = 2 * half;
  const cos = new Float32Array(batch * length * dim);
  const sin = new Float32Array(batch * length * dim);
  for (let p = 0; p < batch * length; p++) {
    const position = positions[p]!;
    for (let i = 0; i < half; i++) {
      const angle = f32(position * inverseFrequency[i]!);
      const c = Math.cos(angle);
      const s = Math.sin(angle);
      cos[p * dim + i] = c;
      cos[p * dim + half + i] = c;
      sin[p * dim + i] = s;
      sin[p * dim + half + i] = s;
    }
  }
  return { cos: tf.tensor4d(cos, [batch, 1, length, dim]), sin: tf.tensor4d(sin, [batch, 1, length, dim]) };
}

/**
 * The signed permutation R [head_dim, head_dim] with x·R = rotate_half(x) = cat(−x₂, x₁).
 * A product with R is exact (one ±1 term per output) and, unlike split + concat, fast on
 * wasm, whose split kernel copies the whole tensor for each half.
 */
export function rotateHalfMatrix(headDim: number): tf.Tensor2D {
  const half = headDim / 2;
  const matrix = new Float32Array(headDim * headDim);
  for (let j = 0; j < half; j++) {
    matrix[(j + half) * headDim + j] = -1;
    matrix[j * headDim + j + half] = 1;
  }
  return tf.tensor2d(matrix, [headDim, headDim]);
}

/** x·cos + rotate_half(x)·sin for x [batch, heads, length, head_dim]. */
export function applyRotary(x: tf.Tensor4D, cos: tf.Tensor4D, sin: tf.Tensor4D, rotation: tf.Tensor2D, ops: MatMulOps): tf.Tensor4D {
  return tf.tidy(() => {
    const headDim = x.shape[3];
    const rotated = tf.reshape(ops.linear(tf.reshape(x, [-1, headDim]) as tf.Tensor2D, rotation), x.shape);
    return tf.add(tf.mul(x, cos), tf.mul(rotated, sin));
  });
}
