// Config of the inference service: YAML file < LEANGRPO_INFERENCE_* env < flags < dotted overrides.
import { z } from "zod";
import { ServerConfigSchema } from "@lean-grpo/kit";

export const InferenceConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50051 }),
  })
  .strict();

export type InferenceConfig = z.infer<typeof InferenceConfigSchema>;
