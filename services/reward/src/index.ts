// @lean-grpo/reward: the RewardService as a library (embedded mode, tests) and its config.
export { createRewardService, type RewardServiceRegistration } from "./service.js";
export { RewardConfigSchema, configuredReward, type RewardConfig } from "./config.js";
export { PRESETS, PRESET_NAMES, type Preset } from "./reward/presets.js";
export { SCORERS, SCORER_NAMES } from "./reward/registry.js";
export type { Scorer, Evidence, GroupEvidence, ScorerOutput } from "./reward/scorer.js";

// In-process scoring, the path ScoreGroup takes for each completion (benchmarks and
// embedders call it without a server): evidence, then the composite reward.
export { gatherEvidence } from "./reward/evidence.js";
export { composeReward } from "./reward/reward-composer.js";
export { applyOverrides } from "./reward/reward-spec.js";
export { mathJudgeOptions } from "./scorers/math-answer.js";
export { extractLastBoxed } from "./math/extract-boxed.js";
