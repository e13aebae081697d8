export { createRewardService } from "./service.js";
export { RewardConfigSchema, type RewardConfig } from "./config.js";
