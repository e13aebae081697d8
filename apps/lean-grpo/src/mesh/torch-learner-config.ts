// The keys of a train file's `services.learner` section that choose and start the PyTorch
// learner (services/learner-torch) instead of the TypeScript one: `impl`, `python`, `torchrun`,
// and `torch`, the PyTorch learner's own section. One zod schema, as every other section has,
// so the config reference, `lean-grpo config` and validation before start-up cover them; the
// `torch` keys and defaults are those of leangrpo_learner/config.py (a test compares the two),
// which checks them again when it starts.
import { z } from "zod";

export const LEARNER_IMPLS = ["ts", "torch"] as const;
export type LearnerImpl = (typeof LEARNER_IMPLS)[number];

/** The PyTorch learner's `torch` section (leangrpo_learner/config.py SCHEMA["torch"]). */
export const TorchSectionSchema = z
  .object({
    /** auto: CUDA when present, else CPU. */
    device: z.enum(["auto", "cpu", "cuda"]).default("auto"),
    /** CPU: intra-op threads of torch (1 is fastest on 2 cores with OpenBLAS doing the matmuls). */
    threads: z.number().int().min(1).default(1),
    /** CPU: OpenBLAS threads (0 leaves OPENBLAS_NUM_THREADS / the library default). */
    blas_threads: z.number().int().min(0).default(0),
    /** Recompute each decoder layer in the backward pass instead of keeping its activations (less memory, more compute). */
    gradient_checkpointing: z.boolean().default(false),
    /**
     * Base weights: auto = bfloat16 on CUDA (bf16 autocast, LoRA and AdamW in float32), float32
     * on CPU; float32 on CUDA is for parity checks. bfloat16 needs CUDA.
     */
    dtype: z.enum(["auto", "float32", "bfloat16"]).default("auto"),
    /** native: the package's Qwen2/Qwen3/Llama code (no extra packages). transformers: any AutoModelForCausalLM with LoRA injected by peft. */
    model_source: z.enum(["native", "transformers"]).default("native"),
    /** transformers only; the native model uses torch's SDPA where torch has it. */
    attn_implementation: z.enum(["sdpa", "flash_attention_2", "eager"]).default("sdpa"),
    /**
     * Tokens (rows × padded length) of one micro-batch: "auto" sizes it from the GPU's free memory
     * after loading (CPU: the top-level micro_batch_tokens); null: the top-level value.
     */
    micro_batch_tokens: z
      .union([z.literal("auto"), z.number().int().min(1)])
      .nullable()
      .default("auto"),
    /** float32 logits per vocabulary-projection chunk, MiB; 0: 16 on CPU, 512 on CUDA. */
    logits_chunk_mib: z.number().int().min(0).max(65536).default(0),
    /** The step as it was before the fast path (separate old-policy and reference passes): parity checks, benchmarks. */
    former_step: z.boolean().default(false),
    /** torch.compile the native model's decoder layer and the vocabulary projection (torch >= 2.0); the first steps pay the compilation. */
    compile: z.boolean().default(false),
    /** none: every rank holds the whole frozen base. fsdp: under torchrun, each decoder layer's frozen weights are sharded across the ranks (FSDP2, torch >= 2.4). */
    sharding: z.enum(["none", "fsdp"]).default("none"),
  })
  .strict();

/** `services.learner.{impl, python, torchrun, torch}` of a train file (the rest of the section is the learner's own config). */
export const LearnerImplSchema = z
  .object({
    /** ts: the TypeScript learner in this process (tfjs on CPU). torch: the PyTorch learner (services/learner-torch) as a child process, for GPUs. */
    impl: z.enum(LEARNER_IMPLS).default("ts"),
    /** impl torch: the Python interpreter with torch, grpcio and protobuf. */
    python: z.string().min(1).default("/usr/bin/python3"),
    /** impl torch: data-parallel ranks on this machine (torch.distributed.run, --standalone); unset: one plain process. */
    torchrun: z
      .object({
        /** Ranks (processes) on this machine: one per GPU, NCCL on GPUs, gloo on CPUs. */
        nproc_per_node: z.number().int().min(1),
      })
      .strict()
      .nullable()
      .optional(),
    /** impl torch: the PyTorch learner's own section, passed to it as given. */
    torch: TorchSectionSchema.optional(),
  })
  .strict();

export type LearnerImplSection = z.output<typeof LearnerImplSchema>;
