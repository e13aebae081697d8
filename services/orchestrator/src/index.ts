// @lean-grpo/orchestrator: the OrchestratorService (runs: rollouts, rewards, training steps,
// adapter sync, checkpoints; held-out evaluation through its Evaluate RPC) and what other
// packages use: the composition root (apps/lean-grpo), its tests and bench/. Nothing more.
export { createOrchestratorService } from "./service.js";
export { OrchestratorConfigSchema, type OrchestratorConfig } from "./config.js";
export type { RunManager } from "./run/run-manager.js";
export {
  ASYNC_IMPORTANCE_SAMPLING_CAP,
  ASYNC_IMPORTANCE_SAMPLING_MODE,
  RunConfigSchema,
  type RunConfig,
} from "./run/config/run-config.js";
export { RunConfigMessageSchema, RunConfigShapeError, runConfigToMessage, type RunConfigMessage } from "./run/config/run-config-message.js";
export { newRunId } from "./run/config/new-run-id.js";
export { listRunDirs, RunOutputs, type StepRecord } from "./run/outputs/run-outputs.js";
export type { EvalRecord } from "./run/outputs/eval-record.js";
export type { RunReport } from "./run/outputs/run-report.js";
export { connectMesh, type MeshClients } from "./run/mesh-clients.js";
export { rewardSpec } from "./run/config/reward-spec.js";
export { checkRewardSpec } from "./run/preflight/reward-check.js";
export { buildPrompt, usesChatPrompts } from "./run/rollout/prompts.js";
export { checkPromptsEncode } from "./run/preflight/prompt-check.js";
export { withAsyncCorrection } from "./run/training/training-stream.js";
export {
  checkRunOffline,
  firstPrompts,
  isLeanTheorem,
  type FirstPrompt,
  type OfflineInputs,
  type OfflineRun,
} from "./run/preflight/offline-preflight.js";
export { loadDataset, openDataset, readDatasetRows, type OpenedDataset } from "./data/load-dataset.js";
export { localPlace as localDatasetPlace, rootPlace as rootDatasetPlace, type DatasetPlace } from "./data/dataset-place.js";
export { openTrainingSet, type TrainingSet } from "./data/training-set.js";
export { DataOrder } from "./run/rollout/data-order.js";
export { AUTO_OPTIONS as AUTO_DATASET_OPTIONS, type DatasetOptions } from "./data/dataset-options.js";
export type { EvalReport } from "./eval/evaluate.js";
