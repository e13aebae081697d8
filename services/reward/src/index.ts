// @lean-grpo/reward: the RewardService as a library (embedded mode, tests) and its config.
export { createRewardService, type RewardServiceRegistration } from "./service.js";
export { RewardConfigSchema, configuredReward, type RewardConfig } from "./config.js";
export { PRESETS, PRESET_NAMES, type Preset } from "./reward/presets.js";
export { SCORERS, SCORER_NAMES } from "./reward/registry.js";
export type { Scorer, Evidence, GroupEvidence, ScorerOutput } from "./reward/scorer.js";
