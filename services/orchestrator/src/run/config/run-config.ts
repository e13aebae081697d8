// What one run does: the `training`, `algorithm`, `reward` and `prompt` sections of a
// train config (StartRunRequest.config), validated with the same loader as service configs.
import { z } from "zod";
import { LAYOUTS, type RecordField } from "../../data/dataset-layout.js";

export const RUN_MODES = ["whole", "tactic", "repair"] as const;
/** The importance-weight cap an async run asks the learner for when algorithm.config does not set one (verl's TIS default). */
export const ASYNC_IMPORTANCE_SAMPLING_CAP = 2;
/** …per token and truncated (the learner's default is TRL's, per sequence and masked). */
export const ASYNC_IMPORTANCE_SAMPLING_MODE = { importance_sampling_level: "token", importance_sampling_action: "truncate" } as const;

export const RunConfigSchema = z
  .object({
    /**
     * Names the run: a fresh run's id (its directory under runs_dir) is `<exp_name>-<time>-<random>`
     * (new-run-id.ts). Empty: the time and random part alone.
     */
    exp_name: z
      .string()
      .regex(/^[A-Za-z0-9._-]*$/, "may hold only letters, digits, '.', '_' and '-' (it names a directory)")
      .max(80)
      .default(""),
    /** The `model.*` keys a run carries (the rest of `model:` configures the services). */
    model: z
      .object({
        /**
         * The reasoning mask (docs/concepts/reasoning-vocabulary.md): sent with every Generate
         * and TrainStep so that the sampler and the learner apply the same one. Gated and strict
         * need the served model's reasoning vocabulary (checked at StartRun).
         */
        reasoning_mask: z.enum(["free", "gated", "strict"]).default("free"),
      })
      .strict()
      .prefault({}),
    dataset: z
      .object({
        /** Train on the dataset's first N records only (a set read whole is validated whole first; a streamed one by its sample); null: all. */
        max_train_samples: z.number().int().positive().nullable().default(null),
        /**
         * What a Lean proof is, for records without their own `proof_format`: `body` (the text after
         * the statement's `:=`), `whole_file` (auxiliary declarations, then the theorem with the
         * dataset's statement, as DeepSeek-Prover-V2, Goedel-Prover-V2 and Kimina-Prover write it;
         * prompts use prompt.whole_file_template), or `auto` (a proof that begins with a declaration is a file).
         */
        proof_format: z.enum(["body", "whole_file", "auto"]).default("body"),
        /**
         * The corpus layout (docs/guide/own-data.md): auto picks a preset where the columns name
         * one unambiguously (informal_prefix: minif2f; src_header or nl_statement: proofnet;
         * natural_language_statement: lean-workbook; lean4_statement: putnambench; problem_id:
         * goedel-pset), else reads the record keys as they are (plain).
         */
        layout: z.enum(LAYOUTS).default("auto"),
        /** Which column holds each record field, over the layout's (e.g. fields.statement: lean4_code). */
        fields: z
          .object({
            /** The column of each record's unique id (default: id, else name). */
            id: z.string().min(1).optional(),
            /** The column of the theorem's name. */
            name: z.string().min(1).optional(),
            /** The column of the Lean statement (a trailing `:= by sorry` is dropped). */
            statement: z.string().min(1).optional(),
            /** The column of the Lean header (imports, opens, options) each statement is checked under. */
            header: z.string().min(1).optional(),
            /** The column of the informal statement, the prompt's {informal}. */
            informal: z.string().min(1).optional(),
            /** The column of Lean declarations the statement needs, placed before it. */
            context: z.string().min(1).optional(),
            /** The column of a list of modules to import. */
            imports: z.string().min(1).optional(),
            /** The column of a math problem's text. */
            problem: z.string().min(1).optional(),
            /** The column of a math problem's expected answer. */
            answer: z.string().min(1).optional(),
            /** The column of the record's domain label. */
            domain: z.string().min(1).optional(),
            /** The column of a difficulty in [0, 1]. */
            difficulty: z.string().min(1).optional(),
          } satisfies Record<RecordField, z.ZodOptional<z.ZodString>>)
          .strict()
          .default({}),
        /** The split of a `datasets` DatasetDict folder (dataset_dict.json); null: train. */
        split: z.string().min(1).nullable().default(null),
        /** The Lean header of records that carry none (Lean Workbook): e.g. "import Mathlib"; "" = none. */
        header: z.string().default(""),
      })
      .strict()
      .prefault({}),
    algorithm: z
      .object({
        /** One of the learner's algorithms (ListAlgorithms, `lean-grpo algorithms`); checked against it at StartRun. */
        name: z.string().min(1).default("grpo"),
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
        /** The generation budget: most tokens per completion (per tactic in tactic mode); the reward's length scorer is fitted to it. */
        max_tokens: z.number().int().positive().default(64),
        /**
         * The sampling distribution (logits / temperature, then top_k, then top_p, renormalised):
         * rollouts sample from it and the learner computes every logprob, KL and importance weight
         * under it (TrainStepHeader.sampling). 0 is greedy.
         */
        temperature: z.number().min(0).default(1),
        /** Keep only the k most likely tokens; 0 keeps all. */
        top_k: z.number().int().min(0).default(0),
        /** Keep the smallest set of most likely tokens whose probability reaches top_p; 1 keeps all. */
        top_p: z.number().gt(0).max(1).default(1),
        /** Seeds the data order and the sampler; a resumed run replays the same order. */
        seed: z.number().int().min(0).default(0),
        /** Learner checkpoint (and run state) every N steps; also at the start and when a run ends or stops. */
        checkpoint_every: z.number().int().positive().default(10),
        /**
         * DAPO dynamic sampling: drop groups whose rewards all agree and sample more prompts
         * until the batch is full. "auto": as the algorithm's own `dynamic_sampling` knob says
         * (on for dapo unless algorithm.config turns it off; see dynamic-sampling.ts).
         */
        dynamic_sampling: z.union([z.boolean(), z.literal("auto")]).default("auto"),
        /** Most extra sampling rounds per step for dynamic sampling before training on what there is. */
        max_refill_rounds: z.number().int().min(0).default(3),
        /**
         * "whole": one Generate per proof, the completion is the whole proof. "tactic": each
         * trajectory alternates Generate (one tactic, the current goals in the prompt) and the
         * verifier's ApplyTactic, then the assembled proof is re-checked in command mode by the
         * reward service. Tactic mode needs Lean theorems and `services.verifier`; the held-out
         * evaluation (`eval`) stays whole-proof greedy decoding. "repair": a whole proof (or math
         * answer) first; while the verdict is not PROVED/correct the checker's feedback is appended
         * as an environment turn and the model tries again, up to rollout.max_turns (repair-rollout.ts).
         */
        mode: z.enum(RUN_MODES).default("whole"),
        /** Tactic mode: most tactics one trajectory may apply before it ends unsolved. */
        max_proof_steps: z.number().int().min(1).default(20),
        /**
         * Overlap generation of step k+1 with training (and adapter sync) of step k: step k+1 samples
         * with the adapter of step k−1, one step off-policy. The sampler logprobs travel with every
         * sample, and the learner corrects for the lag with truncated importance sampling: unless
         * algorithm.config sets importance_sampling_cap (or its alias truncated_is; null turns it
         * off), an async run sends importance_sampling_cap = 2 (ASYNC_IMPORTANCE_SAMPLING_CAP; the learner's
         * default is off). Needs the inference service to keep ≥ 2 adapters loaded (its default).
         * Resume redoes the prefetched step with the adapter it was sampled with, so an async run
         * resumed from a checkpoint ends as an uninterrupted one does.
         */
        async: z.boolean().default(false),
        /**
         * After each adapter sync, a probe completion sampled by the inference service under the new
         * adapter is scored by the learner at the same version (adapter-check.ts); a mean |Δ logprob|
         * above max_logp_difference stops the run naming the version and both numbers. Unset: the
         * inference backend's default (embedded 2e-5, vllm 5e-2); null turns the check off.
         */
        adapter_check: z
          .object({
            /** Largest mean |Δ logprob| between the inference service and the learner on the probe; null: no check. */
            max_logp_difference: z.number().positive().nullable().optional(),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** Repair mode (training.mode "repair", repair-rollout.ts). */
    rollout: z
      .object({
        /** Attempts per trajectory: the first and up to max_turns − 1 repairs after the checker's feedback. */
        max_turns: z.number().int().min(1).max(16).default(2),
        /**
         * A solved trajectory's reward is multiplied by turn_discount^(attempts − 1), so a first-turn
         * solution can be worth more than a repaired one; unsolved ones keep their last attempt's reward. 1: no discount.
         */
        turn_discount: z.number().gt(0).max(1).default(1),
        /** Longest feedback turn, in tokens (its text is cut to fit). */
        max_feedback_tokens: z.number().int().min(8).default(256),
      })
      .strict()
      .prefault({}),
    eval: z
      .object({
        /** Held-out JSONL evaluated while the run trains (greedy unless `samples` > 1); empty: no evaluation. */
        data: z.string().default(""),
        /** Evaluate before the first step, every N steps, and after the last. */
        every: z.number().int().positive().default(10),
        /** Problems of the file to use (its first N); 0: all. */
        max_problems: z.number().int().min(0).default(0),
        /**
         * Attempts per held-out problem, each after the checker's feedback on the last (repair turns,
         * greedy): accuracy after the first and after the last attempt are both recorded. Unset: rollout.max_turns
         * in repair mode, else 1. Set 2 on a whole-mode run to measure what a second turn gives its policy.
         */
        max_turns: z.number().int().min(1).max(16).optional(),
        /**
         * Completions per held-out problem. 1 (the default): one greedy completion each. More: sampled
         * with the training distribution (temperature, top_k, top_p), and pass@k recorded for every `k`.
         */
        samples: z.number().int().min(1).max(1024).default(1),
        /** The k of the pass@k recorded when samples > 1, each at most samples. */
        k: z.array(z.number().int().min(1)).min(1).default([1]),
      })
      .strict()
      .superRefine((value, ctx) => {
        for (const [i, k] of value.k.entries()) {
          if (k > value.samples)
            ctx.addIssue({
              code: "custom",
              path: ["k", i],
              message: `${k} is larger than eval.samples (${value.samples}): pass@k needs at least k completions per problem; raise eval.samples to ${k} or more`,
            });
        }
        if (value.samples > 1 && value.max_turns !== undefined && value.max_turns > 1)
          ctx.addIssue({
            code: "custom",
            path: ["samples"],
            message: "sampled pass@k (eval.samples > 1) and repair turns (eval.max_turns > 1) are not combined; set one of them to 1",
          });
      })
      .prefault({}),
    report: z
      .object({
        /**
         * Completions kept per step for people to read (samples.jsonl, the WatchRun step event,
         * the dashboard): the best and worst of the step's groups in turn. 0 keeps none.
         */
        samples_per_step: z.number().int().min(0).max(64).default(4),
      })
      .strict()
      .prefault({}),
    reward: z
      .object({
        /** RewardService preset; empty: the reward service's configured reward. */
        preset: z.string().default(""),
        /**
         * Scorers replacing or adding to the preset's, by name (RewardSpec.scorers), e.g.
         * [{name: length, weight: 0.5, params: {cache_tokens: 8}}]. The reward service fits the
         * `length` scorer to training.max_tokens (RewardSpec.max_completion_tokens) unless set.
         */
        scorers: z
          .array(
            z
              .object({
                name: z.string().min(1),
                weight: z.number().finite(),
                params: z.record(z.string(), z.unknown()).default({}),
              })
              .strict(),
          )
          .default([]),
      })
      .strict()
      .prefault({}),
    /**
     * How theorems and problems become prompts. A key left unset takes the model's own value where
     * its directory has a prompt_format.json (the prompt it was made for: `lean-grpo train` and
     * `eval` fill it in, `lean-grpo sft` writes it), else the default here.
     */
    prompt: z
      .object({
        /** "auto": the model's chat template when it has one, else plain text. */
        format: z.enum(["auto", "chat", "text"]).default("auto"),
        /**
         * A system turn before the first user turn of every prompt (training, held-out, tactic and
         * repair turns), rendered by the model's chat template; in a text prompt (no template) its
         * first paragraph. Empty: none. A model warm-started without one (models/arith-tiny) sees
         * a prompt it was not trained on: docs/guide/seeds.md measures what that costs.
         */
        system: z.string().default(""),
        /** Math prompt; {problem} is replaced by the problem text. The shipped model's own: "{problem}". */
        math_template: z.string().default("{problem}\nPut the final answer in \\boxed{}."),
        /** Lean prompt; {header}, {context} and {statement} are replaced. */
        lean_template: z.string().default("Complete the following Lean 4 proof.\n```lean4\n{header}\n{context}\n{statement} := by\n"),
        /**
         * Lean prompt of a theorem whose proof is a whole file (dataset.proof_format or the record's
         * proof_format whole_file); placeholders as in lean_template. It asks for a complete Lean file:
         * auxiliary lemmas, then the theorem with its statement unchanged.
         */
        whole_file_template: z
          .string()
          .default(
            "Complete the following Lean 4 code. Write a complete Lean 4 file: any auxiliary lemmas first, then the theorem, its statement unchanged.\n```lean4\n{header}\n{context}\n{statement} := by\n  sorry\n```",
          ),
        /**
         * Tactic-mode prompt of each turn; {header}, {context}, {statement} and {informal} as in
         * lean_template, {proof} the tactics applied so far (one per line, indented), {goals} the
         * current goals. The completion's first line is the next tactic.
         */
        tactic_template: z
          .string()
          .default(
            "Complete the following Lean 4 proof one tactic at a time.\n```lean4\n{header}\n{context}\n{statement} := by\n{proof}```\nCurrent goals:\n{goals}\nNext tactic:",
          ),
        /**
         * Repair mode: the environment turn after a failed attempt, sent as a user turn of the chat
         * template (or plain text without one); {feedback} is the checker's answer (math: that the
         * answer is not correct, never the answer; Lean: the first errors with their lines, the goals left).
         */
        feedback_template: z.string().default("{feedback}\nTry again."),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type RunConfig = z.infer<typeof RunConfigSchema>;
