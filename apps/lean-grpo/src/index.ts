// @lean-grpo/cli as a library: the embedded mesh that `lean-grpo train` starts (for
// benchmarks and tests that drive the whole system the way the command does).
export { startMesh, type MeshOptions, type RunningMesh } from "./mesh/start-mesh.js";
export { SERVICE_CATALOG, SERVICE_NAMES, type CatalogEntry } from "./mesh/service-catalog.js";
export { evaluateThroughOrchestrator, type EvalResult, type EvaluateOptions } from "./eval/evaluate-through-orchestrator.js";
export {
  splitLearnerSection,
  startTorchLearner,
  TORCH_LEARNER_PACKAGE_DIR,
  type TorchLearnerOptions,
  type TorchLearnerProcess,
} from "./mesh/torch-learner-process.js";
export {
  dashboardCommand,
  type DashboardCommandOptions,
  type DashboardContext,
  type RunningDashboard,
} from "./commands/dashboard-command.js";
