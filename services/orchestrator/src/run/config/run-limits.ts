// Upper bounds on the work one StartRun may ask of the mesh, so that a request cannot
// buy unbounded memory, time or disk: rollouts per step, steps, and checkpoints written.
// The operator sets them (orchestrator config `run_limits`); StartRun checks a run's
// config against them before it reads a dataset or calls a service.
import { Code, ConnectError } from "@connectrpc/connect";
import { z } from "zod";
import type { RunConfig } from "./run-config.js";

export const RunLimitsSchema = z
  .object({
    /** training.batch_size × training.num_generations: completions sampled, scored and trained on per step. */
    max_rollouts_per_step: z.number().int().positive().default(16_384),
    /** training.steps. */
    max_steps: z.number().int().positive().default(100_000),
    /** Checkpoints a run writes: one every training.checkpoint_every steps, plus the first and the last. */
    max_checkpoints: z.number().int().positive().default(1_000),
  })
  .strict();

export type RunLimits = z.infer<typeof RunLimitsSchema>;

/** Checkpoints a run of this config writes at most (training-loop.ts: every N steps, the last, and one at the start). */
export function checkpointsOf(training: RunConfig["training"]): number {
  return Math.floor(training.steps / training.checkpoint_every) + 2;
}

/** Throws INVALID_ARGUMENT naming every key over its bound, the value and the limit. */
export function checkRunLimits(config: RunConfig, limits: RunLimits): void {
  const { training } = config;
  const problems: string[] = [];
  const rollouts = training.batch_size * training.num_generations;
  if (rollouts > limits.max_rollouts_per_step) {
    problems.push(
      `training.batch_size × training.num_generations = ${training.batch_size} × ${training.num_generations} = ${rollouts} completions per step ` +
        `is above this orchestrator's limit of ${limits.max_rollouts_per_step} (run_limits.max_rollouts_per_step)`,
    );
  }
  if (training.steps > limits.max_steps) {
    problems.push(`training.steps = ${training.steps} is above this orchestrator's limit of ${limits.max_steps} (run_limits.max_steps)`);
  }
  const checkpoints = checkpointsOf(training);
  if (checkpoints > limits.max_checkpoints) {
    problems.push(
      `training.steps = ${training.steps} with training.checkpoint_every = ${training.checkpoint_every} writes ${checkpoints} checkpoints, ` +
        `above this orchestrator's limit of ${limits.max_checkpoints} (run_limits.max_checkpoints); raise checkpoint_every to at least ` +
        `${Math.ceil(training.steps / Math.max(1, limits.max_checkpoints - 2))}`,
    );
  }
  if (problems.length > 0) throw new ConnectError(problems.join("\n"), Code.InvalidArgument);
}
