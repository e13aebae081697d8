// The checkpoint's tensors as tfjs tensors, laid out for the forward pass: linear weights
// [in, out] (transposed once at load) so that x·W is an untransposed product, the
// embedding and the head [vocab, hidden] as stored. By default these are plain tensors:
// the base model is frozen (LoRA trains beside it) and variableGrads never differentiates
// them. With `trainable` every weight is a tf.Variable instead, for full fine-tuning of
// small models (`lean-grpo sft --full`); `trainable` lists them under their checkpoint names.
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
  /** The variables of a trainable model, one per checkpoint tensor (a tied head is the embedding's); empty when frozen. */
  trainable: TrainableWeight[];
}

/** One trainable tensor and the checkpoint tensor it came from. */
export interface TrainableWeight {
  /** Checkpoint (Hugging Face) name, e.g. model.layers.0.mlp.up_proj.weight. */
  name: string;
  variable: tf.Variable;
  /** The variable holds the checkpoint matrix transposed (linear weights, [in, out]). */
  transposed: boolean;
}

export interface ModelWeightOptions {
  /** Make every weight a trainable variable (full fine-tuning). */
  trainable?: boolean;
}

/** Whether a weight is a variable that gradients are taken for. */
export function isTrainable(weight: tf.Tensor): weight is tf.Variable {
  return weight instanceof tf.Variable && weight.trainable;
}

// tfjs registers variables by a globally unique name; two trainable copies of one model may coexist.
let trainableModels = 0;

/** Row-major [rows, cols] to [cols, rows]. */
function transposeMatrix(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) {
    const rowOffset = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = data[rowOffset + c]!;
  }
  return out;
}

/** Builds each tensor from checkpoint data, as a plain tensor or as a registered trainable variable. */
type TensorMaker = <T extends tf.Tensor>(name: string, tensor: T, transposed?: boolean) => T;

export function createModelWeights({ config, weights }: Checkpoint, options: ModelWeightOptions = {}): ModelWeights {
  const take = (name: string): Float32Array => {
    const data = weights.get(name);
    if (!data) throw new Error(`checkpoint lacks ${name} (loadCheckpoint should have refused it)`);
    return data;
  };
  const trainable: TrainableWeight[] = [];
  const prefix = `full-weights-${trainableModels++}/`;
  const make: TensorMaker = (name, tensor, transposed = false) => {
    if (!options.trainable) return tensor;
    const variable = tf.variable(tensor, true, prefix + name);
    tensor.dispose();
    trainable.push({ name, variable, transposed });
    return variable as unknown as typeof tensor;
  };
  const vector = (name: string) => make(name, tf.tensor1d(take(name)));
  const matrix = (name: string) => make(name, tf.tensor2d(take(name), [config.vocabSize, config.hiddenSize]));
  const embedding = matrix("model.embed_tokens.weight");
  const layers = Array.from({ length: config.numLayers }, (_, i) => createLayer(config, i, take, vector, make));
  return {
    embedding,
    layers,
    finalNorm: vector("model.norm.weight"),
    head: config.tieWordEmbeddings ? embedding : matrix("lm_head.weight"),
    trainable,
  };
}

/** The weights of a trainable model in checkpoint layout (linear weights [out, in]), by checkpoint name. */
export function checkpointTensors(weights: ModelWeights): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  for (const { name, variable, transposed } of weights.trainable) {
    const data = variable.dataSync() as Float32Array;
    const [rows, cols] = variable.shape;
    out.set(name, transposed ? transposeMatrix(data, rows!, cols!) : Float32Array.from(data));
  }
  return out;
}

function createLayer(
  config: ModelConfig,
  layer: number,
  take: (name: string) => Float32Array,
  vector: (name: string) => tf.Tensor1D,
  make: TensorMaker,
): LayerWeights {
  const prefix = `model.layers.${layer}`;
  const linear = (module: LinearModule): LinearWeights => {
    const [fanIn, fanOut] = linearFeatures(config, module);
    const name = linearName(layer, module);
    return {
      weight: make(`${name}.weight`, tf.tensor2d(transposeMatrix(take(`${name}.weight`), fanOut, fanIn), [fanIn, fanOut]), true),
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
