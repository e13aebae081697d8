// The architecture settings of a Hugging Face `config.json` for the three decoder families
// the learner runs: qwen2, qwen3 and llama. Keys written by transformers v4 (torch_dtype,
// rope_theta, rope_scaling) and v5 (dtype, rope_parameters) are both read. Anything the
// forward pass would silently get wrong (sliding windows, other RoPE types, quantization,
// activations other than SiLU) is refused, naming the key and the accepted values.
import { ModelCheckpointError } from "../errors.js";

export const MODEL_TYPES = ["qwen2", "qwen3", "llama"] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

const CHECKPOINT_DTYPES = ["float32", "bfloat16", "float16"] as const;
const ROPE_TYPES = ["default", "llama3"] as const;

/** Llama 3.x rescaling of the RoPE inverse frequencies (`rope_type: "llama3"`). */
export interface Llama3RopeScaling {
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalMaxPositionEmbeddings: number;
}

export interface ModelConfig {
  modelType: ModelType;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  vocabSize: number;
  rmsNormEps: number;
  ropeTheta: number;
  ropeScaling: Llama3RopeScaling | null;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  /** Bias on q/k/v projections (always for qwen2; `attention_bias` otherwise). */
  qkvBias: boolean;
  /** Bias on o_proj (`attention_bias` for llama/qwen3; never for qwen2). */
  outputBias: boolean;
  /** Bias on gate/up/down (`mlp_bias`, llama only). */
  mlpBias: boolean;
  /** RMSNorm over head_dim on q and k before RoPE (qwen3). */
  qkNorm: boolean;
  /** The checkpoint's declared dtype (tensors are widened to float32 whatever it is). */
  dtype: (typeof CHECKPOINT_DTYPES)[number];
  bosTokenId: number | null;
  eosTokenIds: number[];
}

type Raw = Record<string, unknown>;

function fail(key: string, message: string): never {
  throw new ModelCheckpointError(`config.json "${key}" ${message}`);
}

function positiveInteger(raw: Raw, key: string, fallback?: number): number {
  const value = raw[key] ?? fallback;
  if (value === undefined) fail(key, "is missing; it must be a positive integer");
  if (!Number.isSafeInteger(value) || (value as number) <= 0) fail(key, `is ${JSON.stringify(value)}; it must be a positive integer`);
  return value as number;
}

function positiveNumber(raw: Raw, key: string, fallback: number): number {
  const value = raw[key] ?? fallback;
  if (typeof value !== "number" || !(value > 0) || !Number.isFinite(value))
    fail(key, `is ${JSON.stringify(value)}; it must be a positive number`);
  return value;
}

function flag(raw: Raw, key: string, fallback: boolean): boolean {
  const value = raw[key] ?? fallback;
  if (typeof value !== "boolean") fail(key, `is ${JSON.stringify(value)}; it must be true or false`);
  return value;
}

function tokenIds(raw: Raw, key: string): number[] {
  const value = raw[key];
  if (value === undefined || value === null) return [];
  const ids = Array.isArray(value) ? value : [value];
  if (!ids.every((id) => Number.isSafeInteger(id) && id >= 0))
    fail(key, `is ${JSON.stringify(value)}; it must be a token id or a list of token ids`);
  return ids as number[];
}

/** Reads the RoPE settings from v4's rope_theta/rope_scaling or v5's rope_parameters. */
function ropeSettings(raw: Raw): { theta: number; scaling: Llama3RopeScaling | null } {
  const key = raw.rope_parameters != null ? "rope_parameters" : "rope_scaling";
  const params = (raw.rope_parameters ?? raw.rope_scaling ?? {}) as unknown;
  if (typeof params !== "object" || params === null || Array.isArray(params)) fail(key, "must be an object");
  const rope = params as Raw;
  const theta = rope.rope_theta ?? raw.rope_theta ?? 10000;
  if (typeof theta !== "number" || !(theta > 0)) fail("rope_theta", `is ${JSON.stringify(theta)}; it must be a positive number`);
  const type = rope.rope_type ?? rope.type ?? "default";
  if (!(ROPE_TYPES as readonly unknown[]).includes(type)) {
    fail(`${key}.rope_type`, `is ${JSON.stringify(type)}; accepted: ${ROPE_TYPES.join(", ")}`);
  }
  if (type === "default") return { theta, scaling: null };
  const number = (name: string) => {
    const value = rope[name];
    if (typeof value !== "number" || !(value > 0))
      fail(`${key}.${name}`, `is ${JSON.stringify(value)}; llama3 RoPE needs a positive number`);
    return value;
  };
  const scaling = {
    factor: number("factor"),
    lowFreqFactor: number("low_freq_factor"),
    highFreqFactor: number("high_freq_factor"),
    originalMaxPositionEmbeddings: number("original_max_position_embeddings"),
  };
  if (scaling.highFreqFactor <= scaling.lowFreqFactor) {
    fail(`${key}.high_freq_factor`, "must be greater than low_freq_factor");
  }
  return { theta, scaling };
}

/** Validates a parsed config.json and returns the settings the forward pass uses. */
export function parseModelConfig(raw: unknown): ModelConfig {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ModelCheckpointError("config.json must be a JSON object");
  }
  const config = raw as Raw;
  const modelType = config.model_type;
  if (!(MODEL_TYPES as readonly unknown[]).includes(modelType)) {
    fail("model_type", `is ${JSON.stringify(modelType)}; accepted: ${MODEL_TYPES.join(", ")}`);
  }
  const type = modelType as ModelType;
  if (config.quantization_config != null)
    fail("quantization_config", "is set; quantized checkpoints are not supported (use F32, BF16 or F16 weights)");
  const dtypeKey = config.dtype !== undefined ? "dtype" : "torch_dtype";
  const dtype = config[dtypeKey] ?? "float32";
  if (!(CHECKPOINT_DTYPES as readonly unknown[]).includes(dtype)) {
    fail(dtypeKey, `is ${JSON.stringify(dtype)}; accepted: ${CHECKPOINT_DTYPES.join(", ")}`);
  }
  const activation = config.hidden_act ?? "silu";
  if (activation !== "silu") fail("hidden_act", `is ${JSON.stringify(activation)}; accepted: "silu"`);
  if (config.use_sliding_window === true) fail("use_sliding_window", "is true; sliding-window attention is not supported");
  if (Array.isArray(config.layer_types) && config.layer_types.some((t) => t !== "full_attention")) {
    fail("layer_types", 'must be all "full_attention"; sliding-window attention is not supported');
  }
  const attentionDropout = config.attention_dropout ?? 0;
  if (attentionDropout !== 0) fail("attention_dropout", `is ${JSON.stringify(attentionDropout)}; accepted: 0`);

  const hiddenSize = positiveInteger(config, "hidden_size");
  const numHeads = positiveInteger(config, "num_attention_heads");
  const numKvHeads = positiveInteger(config, "num_key_value_heads", numHeads);
  if (numHeads % numKvHeads !== 0) {
    fail("num_key_value_heads", `is ${numKvHeads}; it must divide num_attention_heads (${numHeads})`);
  }
  if (config.head_dim == null && hiddenSize % numHeads !== 0) {
    fail("head_dim", `is missing and hidden_size ${hiddenSize} is not divisible by num_attention_heads ${numHeads}`);
  }
  const headDim = positiveInteger(config, "head_dim", hiddenSize / numHeads);
  if (headDim % 2 !== 0) fail("head_dim", `is ${headDim}; rotary embeddings need an even head_dim`);
  const attentionBias = flag(config, "attention_bias", false);
  const rope = ropeSettings(config);
  return {
    modelType: type,
    hiddenSize,
    intermediateSize: positiveInteger(config, "intermediate_size"),
    numLayers: positiveInteger(config, "num_hidden_layers"),
    numHeads,
    numKvHeads,
    headDim,
    vocabSize: positiveInteger(config, "vocab_size"),
    rmsNormEps: positiveNumber(config, "rms_norm_eps", 1e-6),
    ropeTheta: rope.theta,
    ropeScaling: rope.scaling,
    maxPositionEmbeddings: positiveInteger(config, "max_position_embeddings", 32768),
    tieWordEmbeddings: flag(config, "tie_word_embeddings", false),
    // Qwen2Attention hard-codes bias=True on q/k/v and False on o; it has no attention_bias key.
    qkvBias: type === "qwen2" ? true : attentionBias,
    outputBias: type === "qwen2" ? false : attentionBias,
    mlpBias: type === "llama" ? flag(config, "mlp_bias", false) : false,
    qkNorm: type === "qwen3",
    dtype: dtype as ModelConfig["dtype"],
    bosTokenId: tokenIds(config, "bos_token_id")[0] ?? null,
    eosTokenIds: tokenIds(config, "eos_token_id"),
  };
}
