export { createLearnerService } from "./service.js";
export { LearnerConfigSchema, type LearnerConfig } from "./config.js";

// The GRPO family, the optimizer and the training step; the model itself is @lean-grpo/lm.
export { ALGORITHMS, ALGORITHM_NAMES, algorithmNamed } from "./algorithms/registry.js";
export type { Algorithm } from "./algorithms/algorithm.js";
export { AlgorithmConfigError } from "./algorithms/algorithm-config-error.js";
export type { KlEstimator, LossAggregation, LossSettings, ScaleRewards } from "./algorithms/loss-settings.js";
export type { ParameterSpec } from "./algorithms/parameters.js";
export { groupAdvantages, type GroupAdvantages } from "./algorithms/advantages.js";
export { AdamW, type AdamWSettings, type AdamWState } from "./optimizer/adamw.js";
export { learningRateMultiplier, LR_SCHEDULES, type LrSchedule, type LrScheduleName } from "./optimizer/learning-rate-schedule.js";
export {
  Learner,
  StepOrderError,
  UnknownVersionError,
  type LearnerOptions,
  type OptimizerOptions,
  type StepRequest,
  type StepResult,
} from "./training/learner.js";
export { FullFineTuner, type FullStepResult } from "./training/full-fine-tuner.js";
export { SampleError } from "./training/sample-error.js";
export { CheckpointError } from "./training/checkpoint-files.js";
export type { TrainingExample } from "./training/training-example.js";
// How a step is cut into micro-batches by length (bench/learner measures the step at its real cut).
export { microBatches } from "./training/micro-batches.js";
