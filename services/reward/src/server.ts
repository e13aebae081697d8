// Runs the reward service as its own process: `tsx services/reward/src/server.ts [--config FILE] [--port N] [key=value ...]`.
import { runService } from "@lean-grpo/kit";
import { RewardConfigSchema } from "./config.js";
import { createRewardService } from "./service.js";

await runService({
  name: "reward",
  schema: RewardConfigSchema,
  create: (config) => [createRewardService(config)],
});
