// The shape of a `lean-grpo train` config file, apart from the command that reads it
// (train-command.ts) and the code that composes it (train-config.ts), so both import it.
import { z } from "zod";
import { RunConfigMessageSchema } from "@lean-grpo/orchestrator";
import { MeshModelSchema } from "../mesh/mesh-model.js";
import { SERVICE_NAMES } from "../mesh/service-catalog.js";
import { TrackingSchema } from "../tracking/tracking-config.js";

/**
 * The run sections of a train file (training, algorithm, reward, ...): the orchestrator owns
 * them, so here they are only composed from the sources and carried to StartRun as the typed
 * RunConfig (train-config.ts trainRunConfig); the orchestrator checks and completes them.
 */
const RUN_SECTIONS = Object.fromEntries(
  RunConfigMessageSchema.fields.filter((f) => f.name !== "dataset").map((f) => [f.name, z.unknown().optional()]),
);

/** A `--config` file of `lean-grpo train` (configs/train/*.yaml, configs/algorithm/*.yaml): the CLI's own keys, typed, and the run sections. */
export const TrainFileSchema = z
  .object({
    ...RUN_SECTIONS,
    /** The training file (else the DATA argument), plus the run's dataset keys (max_train_samples). */
    dataset: z
      .object({
        /** The training data (JSONL); the DATA argument of `lean-grpo train` sets it. */
        path: z.string().default(""),
      })
      .catchall(z.unknown())
      .prefault({}),
    /** The model every local service uses (mesh/mesh-model.ts: one shape for `train` and `serve all`). */
    model: MeshModelSchema,
    /** Where run folders (runs/<id>/) are written and read. */
    runs_dir: z.string().min(1).default("runs"),
    /**
     * Per-service config sections for the embedded mesh, each the service's own keys (the
     * reference lists them as services.<service>.*), checked by its schema before anything
     * starts; a section holding only `url` names a remote service instead.
     */
    services: z
      .object(Object.fromEntries(SERVICE_NAMES.map((name) => [name, z.record(z.string(), z.unknown()).optional()])))
      .strict()
      .default({}),
    /** Experiment tracking: Weights & Biases and TensorBoard, with seed 003's logging.* names (docs/guide/tracking.md). */
    logging: TrackingSchema,
  })
  .strict();
export type TrainFile = z.infer<typeof TrainFileSchema>;
