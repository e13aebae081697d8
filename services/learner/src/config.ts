// Config of the learner service: YAML file < LEANGRPO_LEARNER_* env < flags < dotted overrides.
import { availableParallelism } from "node:os";
import { z } from "zod";
import { ServerConfigSchema } from "@lean-grpo/kit";
import { LR_SCHEDULES } from "./optimizer/learning-rate-schedule.js";
import { LINEAR_MODULES } from "@lean-grpo/lm";
import { REASONING_MODEL_KEYS, refineReasoningKeys } from "./reasoning-config.js";

export const LearnerConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50054 }),
    model: z
      .object({
        /** Hugging Face model directory (config.json + model.safetensors); unset: model RPCs answer FAILED_PRECONDITION. */
        dir: z.string().min(1).optional(),
        /** Base model id written into adapter manifests and adapter_config.json; default: model.dir. */
        name: z.string().min(1).optional(),
        ...REASONING_MODEL_KEYS,
      })
      .strict()
      .superRefine(refineReasoningKeys)
      .prefault({}),
    /**
     * With a reasoning vocabulary: "train" trains its rows as PEFT trainable tokens beside
     * LoRA (docs/concepts/reasoning-vocabulary.md); "frozen" keeps them at their copies (the
     * control that shows what the rows' training adds).
     */
    reasoning_rows: z.enum(["train", "frozen"]).default("train"),
    /** Tensor backend: tensorflow (tfjs-node) when installed, else wasm, for auto. */
    backend: z.enum(["auto", "cpu", "wasm", "tensorflow"]).default("auto"),
    lora: z
      .object({
        rank: z.number().int().positive().default(16),
        alpha: z.number().positive().default(32),
        target_modules: z.array(z.enum(LINEAR_MODULES)).min(1).default(["q_proj", "k_proj", "v_proj", "o_proj"]),
        dropout: z.number().min(0).lt(1).default(0),
        use_rslora: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    optimizer: z
      .object({
        learning_rate: z.number().positive().default(1e-5),
        beta1: z.number().min(0).lt(1).default(0.9),
        beta2: z.number().min(0).lt(1).default(0.999),
        epsilon: z.number().positive().default(1e-8),
        weight_decay: z.number().min(0).default(0),
        /** Global-norm gradient clipping; null turns it off. */
        max_grad_norm: z.number().positive().nullable().default(1),
        lr_schedule: z.enum(LR_SCHEDULES).default("constant"),
        warmup_steps: z.number().int().min(0).default(0),
        /** Optimizer updates at which linear and cosine schedules reach 0. */
        total_steps: z.number().int().positive().default(1000),
      })
      .strict()
      .prefault({}),
    /**
     * Threads that compute a step's micro-batches in parallel: the service's own and threads − 1
     * gradient threads, each with its own tfjs and copy of the model (threads/gradient-threads.ts).
     * The same step whatever the count. Default: 2 where there are 2 cores or more, else 1.
     * Unused on the tensorflow backend (tfjs-node computes on every core itself).
     */
    threads: z
      .number()
      .int()
      .positive()
      .default(() => Math.min(2, availableParallelism())),
    /** Padded tokens (rows × longest sequence) per micro-batch; larger batches accumulate gradients. */
    micro_batch_tokens: z.number().int().positive().default(8192),
    /** Most samples one TrainStep may stream (RESOURCE_EXHAUSTED beyond). */
    max_samples_per_step: z.number().int().positive().default(4096),
    /** Where SaveCheckpoint writes `step-<N>` when no path is given. */
    checkpoint_dir: z.string().min(1).default("checkpoints"),
    /** Adapter versions held in memory for ExportAdapter. */
    adapter_versions_kept: z.number().int().positive().default(4),
    /** Seeds the adapter initialisation and LoRA dropout. */
    seed: z.number().int().min(0).default(0),
  })
  .strict();

export type LearnerConfig = z.infer<typeof LearnerConfigSchema>;
