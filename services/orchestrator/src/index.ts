// @lean-grpo/orchestrator: the OrchestratorService (runs: rollouts, rewards, training steps,
// adapter sync, checkpoints) and what a composition root needs to drive or read runs.
export { createOrchestratorService } from "./service.js";
export { OrchestratorConfigSchema, type OrchestratorConfig } from "./config.js";
export type { RunManager } from "./run/run-manager.js";
export { RunConfigSchema, type RunConfig } from "./run/run-config.js";
export { RunConfigMessageSchema, RunConfigShapeError, runConfigToMessage, type RunConfigMessage } from "./run/run-config-message.js";
export { newRunId } from "./run/new-run-id.js";
export { RunOutputs, listRunDirs, type EvalRecord, type RunFile, type StepRecord, type StepSamples } from "./run/run-outputs.js";
export { writeRunReport, type ReportRenderer, type RunReport } from "./run/run-report.js";
export type { SampleRecord } from "./run/step-samples.js";
export { connectMesh, type MeshClients } from "./run/mesh-clients.js";
export { rewardSpec } from "./run/reward-spec.js";
export { checkRewardSpec } from "./run/reward-check.js";
export { buildPrompt, usesChatPrompts } from "./run/prompts.js";
export { checkPromptsEncode, type PromptSet } from "./run/prompt-check.js";
export { loadDataset } from "./data/load-dataset.js";
export { DatasetError } from "./data/dataset-error.js";
export { evaluate, type EvalReport } from "./eval/evaluate.js";
export { HELDOUT_CONCURRENCY } from "./run/heldout-eval.js";
