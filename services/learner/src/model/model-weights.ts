// The checkpoint's tensors as tfjs tensors, laid out for the forward pass: linear weights
// [in, out] (transposed once at load) so that x·W is an untransposed product, the
// embedding and the head [vocab, hidden] as stored. These are plain tensors, not
// variables: the base model is frozen, and variableGrads never differentiates them.
import * as tf from "@tensorflow/tfjs-core";
import type { Checkpoint } from "./checkpoint.js";
import type { ModelConfig } from "./model-config.js";
import { hasBias, LINEAR_MODULES, linearFeatures, linearName, type LinearModule } from "./weight-names.js";

export interface LinearWeights {
  /** [in_features, out_features]. */
  weight: tf.Tensor2D;
  bias: tf.Tensor1D | null;
}

export interface LayerWeights {
  inputNorm: tf.Tensor1D;
  postAttentionNorm: tf.Tensor1D;
  /** Qwen3's per-head RMSNorm weights on q and k ([head_dim]); null elsewhere. */
  qNorm: tf.Tensor1D | null;
  kNorm: tf.Tensor1D | null;
  linears: Record<LinearModule, LinearWeights>;
}

export interface ModelWeights {
  /** [vocab, hidden]. */
  embedding: tf.Tensor2D;
  layers: LayerWeights[];
  finalNorm: tf.Tensor1D;
  /** [vocab, hidden]; the embedding itself when the head is tied. */
  head: tf.Tensor2D;
}

/** Row-major [rows, cols] to [cols, rows]. */
function transposeMatrix(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) {
    const rowOffset = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = data[rowOffset + c]!;
  }
  return out;
}

export function createModelWeights({ config, weights }: Checkpoint): ModelWeights {
  const take = (name: string): Float32Array => {
    const data = weights.get(name);
    if (!data) throw new Error(`checkpoint lacks ${name} (loadCheckpoint should have refused it)`);
    return data;
  };
  const vector = (name: string) => tf.tensor1d(take(name));
  const embedding = tf.tensor2d(take("model.embed_tokens.weight"), [config.vocabSize, config.hiddenSize]);
  const layers = Array.from({ length: config.numLayers }, (_, i) => createLayer(config, i, take, vector));
  return {
    embedding,
    layers,
    finalNorm: vector("model.norm.weight"),
    head: config.tieWordEmbeddings ? embedding : tf.tensor2d(take("lm_head.weight"), [config.vocabSize, config.hiddenSize]),
  };
}

function createLayer(
  config: ModelConfig,
  layer: number,
  take: (name: string) => Float32Array,
  vector: (name: string) => tf.Tensor1D,
): LayerWeights {
  const prefix = `model.layers.${layer}`;
  const linear = (module: LinearModule): LinearWeights => {
    const [fanIn, fanOut] = linearFeatures(config, module);
    const name = linearName(layer, module);
    return {
      weight: tf.tensor2d(transposeMatrix(take(`${name}.weight`), fanOut, fanIn), [fanIn, fanOut]),
      bias: hasBias(config, module) ? vector(`${name}.bias`) : null,
    };
  };
  return {
    inputNorm: vector(`${prefix}.input_layernorm.weight`),
    postAttentionNorm: vector(`${prefix}.post_attention_layernorm.weight`),
    qNorm: config.qkNorm ? vector(`${prefix}.self_attn.q_norm.weight`) : null,
    kNorm: config.qkNorm ? vector(`${prefix}.self_attn.k_norm.weight`) : null,
    linears: Object.fromEntries(LINEAR_MODULES.map((m) => [m, linear(m)])) as Record<LinearModule, LinearWeights>,
  };
}

export function disposeModelWeights(weights: ModelWeights): void {
  const tensors: tf.Tensor[] = [weights.embedding, weights.finalNorm, weights.head];
  for (const layer of weights.layers) {
    tensors.push(layer.inputNorm, layer.postAttentionNorm);
    if (layer.qNorm) tensors.push(layer.qNorm);
    if (layer.kNorm) tensors.push(layer.kNorm);
    for (const linear of Object.values(layer.linears)) {
      tensors.push(linear.weight);
      if (linear.bias) tensors.push(linear.bias);
    }
  }
  // A tied head is the embedding: dispose each tensor once.
  for (const tensor of new Set(tensors)) tensor.dispose();
}
