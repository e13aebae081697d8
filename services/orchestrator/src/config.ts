// Config of the orchestrator service: YAML file < LEANGRPO_ORCHESTRATOR_* env < flags < dotted overrides.
import { z } from "zod";
import { ServerConfigSchema, ServiceTargetSchema } from "@lean-grpo/kit";
import { RunLimitsSchema } from "./run/config/run-limits.js";

const ServiceTargetsSchema = z.union([ServiceTargetSchema, z.array(ServiceTargetSchema).min(1)]);

export const OrchestratorConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50055 }),
    /** Where each run writes `<id>/` (config, metrics, checkpoints, adapters, report). */
    runs_dir: z.string().min(1).default("runs"),
    /**
     * The services a run drives, each an http(s):// URL, a list of replica URLs, or
     * dns:///host:port (every address a replica), balanced per call; `lean-grpo train` and
     * `serve all` fill them with the mesh they start.
     */
    services: z
      .object({
        /** InferenceService: Generate, Tokenize, LoadAdapter. */
        inference: ServiceTargetsSchema.optional(),
        /** RewardService: ScoreGroup. */
        reward: ServiceTargetsSchema.optional(),
        /** LearnerService: TrainStep, ExportAdapter, checkpoints. */
        learner: ServiceTargetsSchema.optional(),
        /** LeanVerifierService: tactic mode's StartProof / ApplyTactic. */
        verifier: ServiceTargetsSchema.optional(),
      })
      .strict()
      .prefault({}),
    /** A lost service is retried this many times (with backoff) before the run stops at its last checkpoint. */
    service_retries: z.number().int().min(0).max(20).default(4),
    /** First retry delay, ms; doubles per retry. */
    retry_backoff_ms: z.number().int().positive().default(500),
    /** Deadline of one Generate / ScoreGroup / TrainStep call, ms. */
    rpc_deadline_ms: z.number().int().positive().default(600_000),
    /** Upper bounds on what one StartRun may ask for (run-limits.ts); a run over one is refused naming the key. */
    run_limits: RunLimitsSchema.prefault({}),
  })
  .strict();

export type OrchestratorConfig = z.infer<typeof OrchestratorConfigSchema>;
