// Config of the learner service: YAML file < LEANGRPO_LEARNER_* env < flags < dotted overrides.
import { z } from "zod";
import { ServerConfigSchema } from "@lean-grpo/kit";

export const LearnerConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50054 }),
  })
  .strict();

export type LearnerConfig = z.infer<typeof LearnerConfigSchema>;
