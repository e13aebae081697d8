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
     * The directory every path a client names resolves under: StartRun's dataset_path and
     * eval.data, Evaluate's dataset_path, adapter_path and checkpoint_path. Relative paths only;
     * absolute paths, `..` and symlinks out of it are refused. Default: the working directory.
     */
    data_root: z.string().min(1).default("."),
    /**
     * Largest held-out or Evaluate set read whole, bytes (checked before reading); a training set
     * up to it (and 20,000 records) is validated whole before the run starts, a larger one is
     * streamed (read batch by batch, a sample validated first: docs/guide/own-data.md).
     */
    max_dataset_bytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024 * 1024),
    /**
     * The services a run drives, each an http(s):// URL, a list of replica URLs, or
     * dns:///host:port (every address a replica; dns+https:///host:port over TLS), balanced
     * per call; `lean-grpo train` and `serve all` fill them with the mesh they start.
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
        /** Bearer token sent on every call to these services (their server.auth.token); default: LEANGRPO_AUTH_TOKEN. */
        token: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    /** A lost service is retried this many times (with backoff) before the run stops at its last checkpoint. */
    service_retries: z.number().int().min(0).max(20).default(4),
    /** First retry delay, ms; doubles per retry. */
    retry_backoff_ms: z.number().int().positive().default(500),
    /** Deadline of one Generate / ScoreGroup / TrainStep call, ms. */
    rpc_deadline_ms: z.number().int().positive().default(600_000),
    /**
     * Deadline of each call StartRun's checks make before a run is accepted, ms: a service
     * that cannot be reached fails the StartRun within this, naming the service, and the next
     * StartRun is never held up by it.
     */
    start_deadline_ms: z.number().int().positive().default(30_000),
    /** Upper bounds on what one StartRun may ask for (run-limits.ts); a run over one is refused naming the key. */
    run_limits: RunLimitsSchema.prefault({}),
  })
  .strict();

export type OrchestratorConfig = z.infer<typeof OrchestratorConfigSchema>;
