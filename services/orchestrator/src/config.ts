// Config of the orchestrator service: YAML file < LEANGRPO_ORCHESTRATOR_* env < flags < dotted overrides.
import { z } from "zod";
import { ServerConfigSchema } from "@lean-grpo/kit";

export const OrchestratorConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50055 }),
  })
  .strict();

export type OrchestratorConfig = z.infer<typeof OrchestratorConfigSchema>;
