export { createLearnerService } from "./service.js";
export { LearnerConfigSchema, type LearnerConfig } from "./config.js";

// The learner core (issue 5): Qwen2/Qwen3/Llama on tfjs with LoRA, PEFT files, exact
// token logprobs, tokenizer and chat template, KV-cache decoding.
export {
  AdapterError, BackendUnavailableError, LearnerCoreError, ModelCheckpointError, ModelInputError, SafetensorsFormatError, TokenizerError,
} from "./errors.js";
export { BACKEND_NAMES, probeBackends, useBackend, type BackendName, type BackendProbe, type TensorBackend } from "./backend/tensor-backend.js";
export type { MatMulOps } from "./backend/matmul-ops.js";
export { SafetensorsFile, FLOAT_DTYPES, type SafetensorsTensorInfo } from "./safetensors/safetensors-reader.js";
export { serializeSafetensors, type TensorToWrite } from "./safetensors/safetensors-writer.js";
export { bfloat16ToFloat32, float16ToFloat32, float32ToBfloat16 } from "./safetensors/float-conversion.js";
export { MODEL_TYPES, parseModelConfig, type Llama3RopeScaling, type ModelConfig, type ModelType } from "./model/model-config.js";
export { loadCheckpoint, type Checkpoint } from "./model/checkpoint.js";
export { expectedWeights, LINEAR_MODULES, type LinearModule } from "./model/weight-names.js";
export { checkpointTensors, isTrainable, type ModelWeightOptions, type TrainableWeight } from "./model/model-weights.js";
export { CausalLM, type ForwardInput, type ForwardOptions, type ForwardOutput } from "./model/causal-lm.js";
export type { KeyValue } from "./model/attention.js";
export { leftPaddedBatch, validateTokenIds, type TokenBatch } from "./model/token-batch.js";
export {
  completionLogprobs, scoreCompletions, type CompletionLogprobOptions, type CompletionLogprobs, type PromptCompletion,
} from "./logprobs/completion-logprobs.js";
export { defaultChunkRows, tokenLogprobsAndEntropy, type TokenLogprobsOptions } from "./logprobs/token-logprobs.js";
export { loraScaling, validateLoraConfig, type LoraConfig } from "./lora/lora-config.js";
export { LoraAdapter, peftKey, type LoraMatrix, type PeftTensor } from "./lora/lora-adapter.js";
export {
  ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, exportPeftAdapter, importPeftAdapter, loadPeftAdapter, parsePeftAdapterConfig,
  peftAdapterConfig, savePeftAdapter, type PeftExportOptions, type PeftFiles,
} from "./lora/peft-adapter.js";
export { lossGradients, type LossGradients } from "./train/adapter-gradients.js";
export { ModelTokenizer } from "./tokenizer/model-tokenizer.js";
export { ChatTemplate, type ChatMessage, type ChatTemplateOptions } from "./tokenizer/chat-template.js";
export { generate, type GeneratedSequence, type GenerationOptions } from "./decode/generate.js";
export { sampleToken, validateSamplingParams, type SampledToken, type SamplingParams } from "./decode/sampler.js";
export { SeededRandom } from "./decode/seeded-random.js";

// The GRPO family, the optimizer and the training step (issue 6).
export { ALGORITHMS, ALGORITHM_NAMES, algorithmNamed } from "./algorithms/registry.js";
export type { Algorithm } from "./algorithms/algorithm.js";
export { AlgorithmConfigError } from "./algorithms/algorithm-config-error.js";
export type { KlEstimator, LossAggregation, LossSettings, ScaleRewards } from "./algorithms/loss-settings.js";
export type { ParameterSpec } from "./algorithms/parameters.js";
export { groupAdvantages, type GroupAdvantages } from "./algorithms/advantages.js";
export { AdamW, type AdamWSettings, type AdamWState } from "./optimizer/adamw.js";
export { learningRateMultiplier, LR_SCHEDULES, type LrSchedule, type LrScheduleName } from "./optimizer/learning-rate-schedule.js";
export {
  Learner, StepOrderError, UnknownVersionError, type LearnerOptions, type OptimizerOptions, type StepRequest, type StepResult,
} from "./training/learner.js";
export { FullFineTuner, type FullStepResult } from "./training/full-fine-tuner.js";
export { SampleError } from "./training/sample-error.js";
export { CheckpointError } from "./training/checkpoint-files.js";
export type { TrainingExample } from "./training/training-example.js";
