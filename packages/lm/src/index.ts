// @lean-grpo/lm: the project's model library on tfjs. Qwen2/Qwen3/Llama causal LMs from
// Hugging Face directories, safetensors, LoRA and PEFT files, exact token logprobs and their
// gradients, KV-cache decoding. Services depend on it; it depends on no service.
// Subpaths that load no tfjs: "@lean-grpo/lm/tokenizer", "@lean-grpo/lm/safetensors"; the
// seeded generator is its own package, @lean-grpo/random.
export {
  AdapterError,
  BackendUnavailableError,
  ModelLibraryError,
  ModelCheckpointError,
  ModelInputError,
  SafetensorsFormatError,
  TokenizerError,
} from "./errors.js";
export {
  BACKEND_NAMES,
  probeBackends,
  useBackend,
  type BackendName,
  type BackendProbe,
  type TensorBackend,
} from "./backend/tensor-backend.js";
export type { MatMulOps } from "./backend/matmul-ops.js";
export { filterTfjsBanner } from "./backend/tfjs-banner-filter.js";
export { SafetensorsFile, FLOAT_DTYPES, type SafetensorsTensorInfo } from "./safetensors/safetensors-reader.js";
export { serializeSafetensors, type TensorToWrite } from "./safetensors/safetensors-writer.js";
export { bfloat16ToFloat32, float16ToFloat32, float32ToBfloat16, float32ToFloat16 } from "./safetensors/float-conversion.js";
export { MODEL_TYPES, parseModelConfig, type Llama3RopeScaling, type ModelConfig, type ModelType } from "./model/model-config.js";
export { loadCheckpoint, type Checkpoint } from "./model/checkpoint.js";
export { expectedWeights, LINEAR_MODULES, type LinearModule } from "./model/weight-names.js";
export { checkpointTensors, isTrainable, type ModelWeightOptions, type ModelWeights, type TrainableWeight } from "./model/model-weights.js";
export { CausalLM, type ForwardInput, type ForwardOptions, type ForwardOutput } from "./model/causal-lm.js";
export type { KeyValue } from "./model/attention.js";
export { leftPaddedBatch, validateTokenIds, type TokenBatch } from "./model/token-batch.js";
export {
  completionLogprobs,
  scoreCompletions,
  type CompletionLogprobOptions,
  type CompletionLogprobs,
  type PromptCompletion,
} from "./logprobs/completion-logprobs.js";
export { defaultChunkRows, tokenLogprobsAndEntropy, type TokenLogprobsOptions } from "./logprobs/token-logprobs.js";
export {
  FULL_DISTRIBUTION,
  keptTokens,
  supportOfRow,
  truncates,
  validateSamplingDistribution,
  type SamplingDistribution,
} from "./logprobs/sampling-distribution.js";
export { loraScaling, validateLoraConfig, type LoraConfig } from "./lora/lora-config.js";
export { LoraAdapter, peftKey, type LoraMatrix, type PeftTensor } from "./lora/lora-adapter.js";
export {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  exportPeftAdapter,
  importPeftAdapter,
  loadPeftAdapter,
  parsePeftAdapterConfig,
  peftAdapterConfig,
  savePeftAdapter,
  type PeftExportOptions,
  type PeftFiles,
} from "./lora/peft-adapter.js";
export { mergeLora } from "./lora/merge-lora.js";
export { lossGradients, type LossGradients } from "./gradients/adapter-gradients.js";
export { ModelTokenizer } from "./tokenizer/model-tokenizer.js";
export { ChatTemplate, type ChatMessage, type ChatTemplateOptions } from "./tokenizer/chat-template.js";
export { generate, type GeneratedSequence, type GenerationOptions } from "./decode/generate.js";
export { ContinuousDecoder, keyAlignment, type ContinuousDecoderOptions, type DecodeRequest } from "./decode/continuous-decoder.js";
export { sampleToken, validateSamplingParams, type SampledToken, type SamplingParams } from "./decode/sampler.js";
export { rowSeed, SeededRandom } from "@lean-grpo/random";
export * from "./reasoning-vocab/index.js";
export { expandCheckpoint } from "./reasoning-vocab/expand-checkpoint.js";
export { loadReasoningModel, resolveModelReasoning } from "./model/reasoning-model.js";
export { TOKEN_ROWS_KEYS, type TokenRows, type TokenRowsInit } from "./lora/lora-adapter.js";
export { trainableTokenIndices } from "./lora/peft-adapter.js";
export { isStop } from "./decode/sampler.js";
