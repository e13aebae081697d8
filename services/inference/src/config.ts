// Config of the inference service: YAML file < LEANGRPO_INFERENCE_* env < flags < dotted overrides.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ServerConfigSchema } from "@lean-grpo/kit";
import { REASONING_MODEL_KEYS, refineReasoningKeys } from "@lean-grpo/lm/reasoning-vocab";

export const InferenceConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50051 }),
    /** "auto": vLLM when vllm.url is set, else the embedded tfjs sampler. */
    backend: z.enum(["auto", "vllm", "embedded"]).default("auto"),
    vllm: z
      .object({
        /** Root URL of vLLM's OpenAI-compatible server, e.g. http://vllm:8000 (no /v1). */
        url: z.url().optional(),
        /** Bearer key the vLLM server was started with (--api-key); "EMPTY" when it has none. */
        api_key: z.string().default("EMPTY"),
        /**
         * The served model's tokenizer.json + tokenizer_config.json: text and chat prompts
         * are then tokenized here with its chat template; without it, by vLLM's /tokenize.
         */
        tokenizer_dir: z.string().min(1).optional(),
        /** Served base model name; default: the model /v1/models lists without a parent. */
        model: z.string().min(1).optional(),
        /** Requests in flight to vLLM at once; more wait in line (bounded by their deadline). */
        max_concurrency: z.number().int().positive().default(64),
        /** Retries of 408/409/429/5xx and connection errors, with backoff, within the deadline. */
        max_retries: z.number().int().min(0).max(10).default(3),
        /**
         * How the operator started vLLM: `--logprobs-mode processed_logprobs` (logprobs of the
         * distribution sampled: after temperature, top-k, top-p) or vLLM's default raw_logprobs
         * (of the raw logits). The learner needs the processed ones, so with raw_logprobs a
         * Generate that samples at T ≠ 1 or with top-k/top-p is refused naming this key (its
         * logprobs would be of another distribution). The default is vLLM's own: a mismatched
         * run is refused at start, never trained quietly.
         */
        logprobs_mode: z.enum(["raw_logprobs", "processed_logprobs"]).default("raw_logprobs"),
        /** How often health probes vLLM's /health, ms. */
        health_interval_ms: z.number().int().positive().default(5_000),
        /**
         * vLLM was started with the project's reasoning-mask logits processor
         * (`--logits-processors leangrpo_learner.reasoning.vllm_logits_processor:ReasoningMaskLogitsProcessor`,
         * docs/concepts/reasoning-vocabulary.md): gated and strict requests are then passed to it
         * (vllm_xargs.reasoning_mask); without it they are refused naming this key.
         */
        reasoning_logits_processor: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    embedded: z
      .object({
        /** Hugging Face model directory (config.json, model.safetensors, tokenizer.json). */
        model_dir: z.string().min(1).optional(),
        /** tfjs backend: auto picks tensorflow (tfjs-node) when installed, else wasm. */
        tensor_backend: z.enum(["auto", "cpu", "wasm", "tensorflow"]).default("auto"),
        /**
         * Continuous batching: rows of concurrent Generate calls decoded at once (they join and
         * leave between passes; a call gives the same tokens alone or batched). 0 turns it
         * off: calls take turns, each batched over its own n only.
         */
        max_batch_rows: z.number().int().min(0).default(256),
      })
      .strict()
      .prefault({}),
    /** The served model's reasoning vocabulary (the mesh's `model.reasoning_*`). */
    model: z.object(REASONING_MODEL_KEYS).strict().superRefine(refineReasoningKeys).prefault({}),
    adapters: z
      .object({
        /**
         * Where streamed adapters are written, and the root of LoadAdapter's source.path (relative
         * to it; absolute paths, `..` and symlinks out of it are refused); vLLM must read the same path.
         */
        dir: z.string().min(1).default(join(tmpdir(), "lean-grpo-adapters")),
        /** Versions of the training policy (policy-vN) kept loaded; older ones are unloaded once idle. Other names stay until unloaded. */
        keep: z.number().int().min(1).max(64).default(2),
        /**
         * Most bytes one streamed adapter may announce, all files together (LoRA on every
         * projection of a 70B model at rank 256 stays under a few GiB).
         */
        max_bytes: z
          .number()
          .int()
          .positive()
          .default(4 * 1024 ** 3),
      })
      .strict()
      .prefault({}),
    limits: z
      .object({
        /** Largest `n` of one Generate. */
        max_n: z.number().int().positive().default(64),
        /** max_tokens when a request sets none. */
        default_max_tokens: z.number().int().positive().default(512),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type InferenceConfig = z.infer<typeof InferenceConfigSchema>;
