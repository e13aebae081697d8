// Config of the learner service: YAML file < LEANGRPO_LEARNER_* env < flags < dotted overrides.
import { availableParallelism } from "node:os";
import { z } from "zod";
import { ServerConfigSchema } from "@lean-grpo/kit";
import { LR_SCHEDULES } from "./optimizer/learning-rate-schedule.js";
import { LINEAR_MODULES } from "@lean-grpo/lm";
import { REASONING_MODEL_KEYS, refineReasoningKeys } from "@lean-grpo/lm/reasoning-vocab";

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
        /** LoRA rank r: the adapter's width (PEFT r). */
        rank: z.number().int().positive().default(16),
        /** LoRA alpha: the update is scaled by alpha / r (alpha / sqrt(r) with use_rslora). */
        alpha: z.number().positive().default(32),
        /** Linear modules that get an adapter (PEFT target_modules). */
        target_modules: z.array(z.enum(LINEAR_MODULES)).min(1).default(["q_proj", "k_proj", "v_proj", "o_proj"]),
        /** Dropout on the adapter's input while training (PEFT lora_dropout); 0 is none. */
        dropout: z.number().min(0).lt(1).default(0),
        /** Rank-stabilised LoRA: scale by alpha / sqrt(r) instead of alpha / r (PEFT use_rslora). */
        use_rslora: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    optimizer: z
      .object({
        /** AdamW's peak learning rate. */
        learning_rate: z.number().positive().default(1e-5),
        /** AdamW's first-moment decay. */
        beta1: z.number().min(0).lt(1).default(0.9),
        /** AdamW's second-moment decay. */
        beta2: z.number().min(0).lt(1).default(0.999),
        /** AdamW's epsilon, added to the second moment's root. */
        epsilon: z.number().positive().default(1e-8),
        /** AdamW's decoupled weight decay. */
        weight_decay: z.number().min(0).default(0),
        /** Global-norm gradient clipping; null turns it off. */
        max_grad_norm: z.number().positive().nullable().default(1),
        /** Learning-rate schedule after warm-up, as transformers' get_{constant,linear,cosine}_schedule_with_warmup. */
        lr_schedule: z.enum(LR_SCHEDULES).default("constant"),
        /** Steps of linear warm-up from 0 to learning_rate. */
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
    /**
     * The root of every SaveCheckpoint / LoadCheckpoint path (relative to it; absolute paths,
     * `..` and symlinks out of it are refused); SaveCheckpoint without a path writes `step-<N>` here.
     */
    checkpoint_dir: z.string().min(1).default("checkpoints"),
    /** Adapter versions held in memory for ExportAdapter. */
    adapter_versions_kept: z.number().int().positive().default(4),
    /** Seeds the adapter initialisation and LoRA dropout. */
    seed: z.number().int().min(0).default(0),
  })
  .strict();

export type LearnerConfig = z.infer<typeof LearnerConfigSchema>;
