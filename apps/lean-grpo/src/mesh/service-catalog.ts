// The services `lean-grpo serve` can start, each through its public library entry
// (createXService + its config schema): the CLI is a composition root, not a
// reader of other services' internals.
import type { z } from "zod";
import type { ServerConfig, ServiceRegistration } from "@lean-grpo/kit";
import { InferenceConfigSchema, createInferenceService } from "@lean-grpo/inference";
import { VerifierConfigSchema, createVerifierService } from "@lean-grpo/verifier";
import { RewardConfigSchema, createRewardService } from "@lean-grpo/reward";
import { LearnerConfigSchema, createLearnerService } from "@lean-grpo/learner";
import { OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { createOrchestratorService } from "@lean-grpo/orchestrator";
import { renderOfflineReport } from "@lean-grpo/dashboard";

export interface CatalogEntry {
  name: string;
  schema: z.ZodType<{ server: ServerConfig }>;
  create(config: { server: ServerConfig }): ServiceRegistration;
  /** In `serve all`: points the config at the services it calls (by their URLs), unless set. */
  wire?(config: { server: ServerConfig }, urls: Readonly<Record<string, string>>): void;
}

function entry<S extends z.ZodType<{ server: ServerConfig }>>(
  name: string,
  schema: S,
  create: (config: z.infer<S>) => ServiceRegistration,
  wire?: (config: z.infer<S>, urls: Readonly<Record<string, string>>) => void,
): CatalogEntry {
  return { name, schema, create: create as CatalogEntry["create"], ...(wire ? { wire: wire as CatalogEntry["wire"] } : {}) };
}

/** In start-up order: the orchestrator last, since it calls the others. */
export const SERVICE_CATALOG: readonly CatalogEntry[] = [
  entry("inference", InferenceConfigSchema, createInferenceService),
  entry("verifier", VerifierConfigSchema, createVerifierService),
  entry("reward", RewardConfigSchema, createRewardService, (config, urls) => {
    config.verifier.url ??= urls.verifier;
  }),
  entry("learner", LearnerConfigSchema, createLearnerService),
  // report.html is the dashboard page rendered offline (apps/dashboard); a service may not import an app.
  entry(
    "orchestrator",
    OrchestratorConfigSchema,
    (config) => createOrchestratorService(config, { renderReport: renderOfflineReport }),
    (config, urls) => {
      // Started last: every service a run drives is up by now.
      config.services.inference ??= urls.inference;
      config.services.reward ??= urls.reward;
      config.services.learner ??= urls.learner;
      config.services.verifier ??= urls.verifier;
    },
  ),
];

export const SERVICE_NAMES = SERVICE_CATALOG.map((s) => s.name);
