// Config of the verifier service: YAML file < LEANGRPO_VERIFIER_* env < flags < dotted overrides.
import { z } from "zod";
import { ServerConfigSchema } from "@lean-grpo/kit";

export const VerifierConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50052 }),
  })
  .strict();

export type VerifierConfig = z.infer<typeof VerifierConfigSchema>;
