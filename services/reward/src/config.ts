// Config of the reward service: YAML file < LEANGRPO_REWARD_* env < flags < dotted overrides.
import { z } from "zod";
import { ServerConfigSchema } from "@lean-grpo/kit";

export const RewardConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50053 }),
  })
  .strict();

export type RewardConfig = z.infer<typeof RewardConfigSchema>;
