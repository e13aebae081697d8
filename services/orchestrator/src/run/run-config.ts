// What one run does: the `training`, `algorithm`, `reward` and `prompt` sections of a
// train config (StartRunRequest.config), validated with the same loader as service configs.
import { z } from "zod";

export const ALGORITHM_NAMES = ["grpo", "drgrpo", "dapo", "gspo", "dgpo"] as const;

export const RunConfigSchema = z
  .object({
    algorithm: z
      .object({
        name: z.enum(ALGORITHM_NAMES).default("grpo"),
        /** Knobs sent as TrainStepHeader.algorithm_config; the learner lists the valid keys (`lean-grpo algorithms`). */
        config: z.record(z.string(), z.unknown()).default({}),
      })
      .strict()
      .prefault({}),
    training: z
      .object({
        /** Optimizer steps of the run. */
        steps: z.number().int().positive().default(100),
        /** Prompts (groups) per step. */
        batch_size: z.number().int().positive().default(8),
        /** Completions per prompt (G). */
        num_generations: z.number().int().min(2).default(8),
        max_tokens: z.number().int().positive().default(64),
        temperature: z.number().min(0).default(1),
        top_p: z.number().gt(0).max(1).default(1),
        /** Seeds the data order and the sampler; a resumed run replays the same order. */
        seed: z.number().int().min(0).default(0),
        /** Learner checkpoint (and run state) every N steps; also at the start and when a run ends or stops. */
        checkpoint_every: z.number().int().positive().default(10),
        /**
         * DAPO dynamic sampling: drop groups whose rewards all agree and sample more prompts
         * until the batch is full. "auto": when the algorithm is dapo.
         */
        dynamic_sampling: z.union([z.boolean(), z.literal("auto")]).default("auto"),
        /** Most extra sampling rounds per step for dynamic sampling before training on what there is. */
        max_refill_rounds: z.number().int().min(0).default(3),
      })
      .strict()
      .prefault({}),
    eval: z
      .object({
        /** Held-out JSONL evaluated with greedy decoding while the run trains; empty: no evaluation. */
        data: z.string().default(""),
        /** Evaluate before the first step, every N steps, and after the last. */
        every: z.number().int().positive().default(10),
        /** Problems of the file to use (its first N); 0: all. */
        max_problems: z.number().int().min(0).default(0),
      })
      .strict()
      .prefault({}),
    reward: z
      .object({
        /** RewardService preset; empty: the reward service's configured reward. */
        preset: z.string().default(""),
      })
      .strict()
      .prefault({}),
    prompt: z
      .object({
        /** "auto": the model's chat template when it has one, else plain text. */
        format: z.enum(["auto", "chat", "text"]).default("auto"),
        /** Math prompt; {problem} is replaced by the problem text. */
        math_template: z.string().default("{problem}\nPut the final answer in \\boxed{}."),
        /** Lean prompt; {header}, {context} and {statement} are replaced. */
        lean_template: z
          .string()
          .default("Complete the following Lean 4 proof.\n```lean4\n{header}\n{context}\n{statement} := by\n"),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type RunConfig = z.infer<typeof RunConfigSchema>;

/** Whether the run drops zero-variance groups and refills the batch. */
export function usesDynamicSampling(config: RunConfig): boolean {
  const setting = config.training.dynamic_sampling;
  return setting === "auto" ? config.algorithm.name === "dapo" : setting;
}
