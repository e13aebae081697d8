// The names the seeds (the projects lean-grpo grew from) give our settings, in one place:
// each documented config key of seeds 001-004 with the meaning its seed gives it, mapped onto
// our key, or refused with what the seed meant and what to type here. The train command
// applies them to every config source (file, groups, env, flags, overrides) before the schema
// sees them (translateSeedNames), then derives the settings that need the whole config
// (epochs, TRL's per-device batch, the reward values, the dtype: seed-derived.ts).
// The seeds' own command-line flags are the train command's options (train-command.ts).
import { existsSync } from "node:fs";
import { ConfigError, isPlainObject, type ConfigIssue, type SourceEntry } from "@lean-grpo/kit";

export const SEEDS = {
  "001": "lean-grpo README (CLI: lean-grpo train, --algo-config, YAML with algorithm_config)",
  "002": "lean-grpo repository guide (configs/*.yaml, --lr)",
  "003": "rlvr_vocab GRPO guide (Hydra overrides, TRL GRPOConfig names, W&B logging.*)",
  "004": "GRPO RL training guide (YAML of a custom TRL trainer, --model_path / --output_dir / --max_samples)",
} as const;
export type Seed = keyof typeof SEEDS;

/** A setting that needs the whole config to resolve (seed-derived.ts). */
export const DERIVED = [
  "epochs",
  "per_device_batch",
  "accumulation",
  "reward_correct",
  "reward_wrong",
  "reward_no_answer",
  "torch_dtype",
] as const;
export type Derived = (typeof DERIVED)[number];

/** What each derived setting sets here (for help and docs). */
export const DERIVED_SETS: Readonly<Record<Derived, string>> = {
  epochs: "training.steps = ceil(epochs × records / training.batch_size)",
  per_device_batch: "training.batch_size = per_device × accumulation / num_generations",
  accumulation: "training.batch_size (with per_device_train_batch_size)",
  reward_correct: "reward.scorers: math_answer params.correct",
  reward_wrong: "reward.scorers: math_answer params.wrong",
  reward_no_answer: "reward.scorers: math_answer params.no_answer",
  torch_dtype: "services.learner.torch.dtype (impl torch; fp32 is the default learner's)",
};

export interface SeedName {
  seeds: readonly Seed[];
  /** The key as the seed writes it; `.*` at the end: every key under it. */
  name: string;
  /** What it means in the seed. */
  meaning: string;
  /** Our key it sets (dotted); or a derived setting; or a refusal: what to type here instead. */
  to: { key: string } | { derived: Derived } | { refuse: string };
  /** Converts or checks the value (throws a message on a bad one). */
  value?: (value: unknown) => unknown;
}

const LR = "services.learner.optimizer.learning_rate";
const MODEL_DIR = { key: "model.dir" };
const HUB =
  "a local Hugging Face model directory (config.json, tokenizer, safetensors); a Hub id is not downloaded: " +
  "huggingface-cli download ORG/NAME --local-dir models/NAME, then model.dir=models/NAME";

export const SEED_NAMES: readonly SeedName[] = [
  // Model.
  { seeds: ["003"], name: "model.name", meaning: `the model to train (a Hub id in the seed); here ${HUB}`, to: MODEL_DIR },
  { seeds: ["004"], name: "model.path", meaning: "the SFT checkpoint to start from (a local directory)", to: MODEL_DIR },
  { seeds: ["004"], name: "model_path", meaning: "the SFT checkpoint to start from (a local directory)", to: MODEL_DIR },
  { seeds: ["001", "002"], name: "base_model", meaning: `the model to train; here ${HUB}`, to: MODEL_DIR },
  {
    seeds: ["003"],
    name: "model.model_kwargs.torch_dtype",
    meaning: "precision of the base weights: fp32 | bf16 (fp16 is refused: the learner trains in float32 or bf16 autocast)",
    to: { derived: "torch_dtype" },
    value: dtypeName,
  },
  {
    seeds: ["003"],
    name: "model.model_kwargs.load_in_8bit",
    meaning: "8-bit quantized base weights (bitsandbytes)",
    to: {
      refuse:
        "8-bit base weights are not supported: the learner trains LoRA adapters on float32 or bf16 weights (model.model_kwargs.torch_dtype=bf16 with services.learner.impl=torch on CUDA halves the memory)",
    },
  },
  { seeds: ["003"], name: "model.generation_kwargs.max_new_tokens", meaning: "tokens per completion", to: { key: "training.max_tokens" } },
  { seeds: ["003"], name: "model.generation_kwargs.temperature", meaning: "sampling temperature", to: { key: "training.temperature" } },
  { seeds: ["003"], name: "model.generation_kwargs.top_p", meaning: "nucleus sampling", to: { key: "training.top_p" } },
  { seeds: ["004"], name: "max_new_tokens", meaning: "tokens per completion", to: { key: "training.max_tokens" } },
  { seeds: ["001"], name: "max_completion_length", meaning: "tokens per completion (TRL)", to: { key: "training.max_tokens" } },
  { seeds: ["004"], name: "temperature", meaning: "sampling temperature", to: { key: "training.temperature" } },
  { seeds: ["004"], name: "top_p", meaning: "nucleus sampling", to: { key: "training.top_p" } },
  // LoRA.
  { seeds: ["004"], name: "lora_r", meaning: "LoRA rank", to: { key: "services.learner.lora.rank" } },
  { seeds: ["002"], name: "lora_rank", meaning: "LoRA rank", to: { key: "services.learner.lora.rank" } },
  { seeds: ["004"], name: "lora_alpha", meaning: "LoRA alpha (scale alpha / rank)", to: { key: "services.learner.lora.alpha" } },
  { seeds: ["004"], name: "lora_dropout", meaning: "dropout on the LoRA input", to: { key: "services.learner.lora.dropout" } },
  // Algorithm.
  {
    seeds: ["001", "002"],
    name: "algorithm",
    meaning: "the algorithm by name (a string in the seeds' YAML)",
    to: { key: "algorithm.name" },
  },
  { seeds: ["001", "002"], name: "algorithm_config.*", meaning: "the algorithm's knobs", to: { key: "algorithm.config.*" } },
  { seeds: ["004"], name: "kl_coef", meaning: "KL penalty coefficient against the reference model", to: { key: "algorithm.config.beta" } },
  { seeds: ["001"], name: "beta", meaning: "KL penalty coefficient (TRL)", to: { key: "algorithm.config.beta" } },
  // Group size, batch, length of the run.
  {
    seeds: ["001", "002"],
    name: "num_generations",
    meaning: "completions per prompt (the group size G)",
    to: { key: "training.num_generations" },
  },
  {
    seeds: ["004"],
    name: "num_return_sequences",
    meaning: "completions per prompt (the group size G)",
    to: { key: "training.num_generations" },
  },
  ...["", "training."].flatMap((at): SeedName[] => [
    {
      seeds: at ? ["003"] : ["002", "004"],
      name: `${at}learning_rate`,
      meaning: "AdamW learning rate",
      to: { key: LR },
    },
    {
      seeds: at ? ["003"] : ["002"],
      name: `${at}num_train_epochs`,
      meaning: "passes over the training set: training.steps = ceil(epochs × records / training.batch_size)",
      to: { derived: "epochs" },
      value: positiveNumber,
    },
    {
      seeds: at ? ["003"] : ["004"],
      name: `${at}per_device_train_batch_size`,
      meaning:
        "completions per device per micro-step (TRL): with gradient_accumulation_steps, completions per optimizer step; " +
        "training.batch_size (prompts) = per_device_train_batch_size × gradient_accumulation_steps / training.num_generations",
      to: { derived: "per_device_batch" },
      value: positiveInteger,
    },
    {
      seeds: at ? ["003"] : ["004"],
      name: `${at}gradient_accumulation_steps`,
      meaning:
        "micro-steps per optimizer step (TRL); see per_device_train_batch_size (the learner splits a step into micro-batches itself: services.learner.micro_batch_tokens)",
      to: { derived: "accumulation" },
      value: positiveInteger,
    },
  ]),
  {
    seeds: ["004"],
    name: "num_epochs",
    meaning: "passes over the training set (as num_train_epochs)",
    to: { derived: "epochs" },
    value: positiveNumber,
  },
  { seeds: ["002"], name: "max_proof_steps", meaning: "tactics per proof attempt (tactic mode)", to: { key: "training.max_proof_steps" } },
  { seeds: ["001"], name: "save_steps", meaning: "checkpoint every N steps", to: { key: "training.checkpoint_every" } },
  {
    seeds: ["001"],
    name: "max_grad_norm",
    meaning: "gradient clipping (global norm)",
    to: { key: "services.learner.optimizer.max_grad_norm" },
  },
  // Data.
  {
    seeds: ["003"],
    name: "dataset.name",
    meaning: "the training set (a Hub id in the seed); here a local JSONL file",
    to: { key: "dataset.path" },
    value: localDataset,
  },
  {
    seeds: ["003"],
    name: "dataset.system_prompt",
    meaning: "a system turn before each problem",
    to: {
      refuse:
        "prompts are templates here: prompt.math_template (default '{problem}\\nPut the final answer in \\\\boxed{}.') and prompt.lean_template, sent as the user turn of the model's chat template (prompt.format)",
    },
  },
  // Reward (seed 004's binary verifier is our math_answer scorer).
  { seeds: ["004"], name: "reward_correct", meaning: "reward of a correct \\boxed{} answer", to: { derived: "reward_correct" } },
  { seeds: ["004"], name: "reward_wrong", meaning: "reward of a wrong \\boxed{} answer", to: { derived: "reward_wrong" } },
  { seeds: ["004"], name: "reward_no_answer", meaning: "reward when there is no \\boxed{} answer", to: { derived: "reward_no_answer" } },
  { seeds: ["002"], name: "reward_type", meaning: "reward preset: binary | shaped | lenient | strict", to: { key: "reward.preset" } },
  // Output and tracking.
  {
    seeds: ["004"],
    name: "output_dir",
    meaning: "where the run's files go (here each run is a directory under it)",
    to: { key: "runs_dir" },
  },
  { seeds: ["001"], name: "report_to", meaning: "trackers (TRL): wandb, tensorboard", to: { key: "logging.report_to" } },
];

/** The seed name a dotted key is, if any (exact, or under a `.*` name). */
export function seedNameOf(path: readonly string[]): { name: SeedName; rest: string[] } | undefined {
  const dotted = path.join(".");
  for (const name of SEED_NAMES) {
    if (name.name === dotted) return { name, rest: [] };
    if (name.name.endsWith(".*")) {
      const prefix = name.name.slice(0, -2).split(".");
      if (path.length > prefix.length && prefix.every((part, i) => path[i] === part)) return { name, rest: path.slice(prefix.length) };
    }
  }
  return undefined;
}

/** A derived setting as the sources gave it (the last one wins, as for any key). */
export interface DerivedValue {
  value: unknown;
  source: string;
  /** As written, e.g. num_epochs. */
  name: string;
}

/**
 * Applies the seed names to config entries: one per leaf key (a file's mapping is split into
 * its keys, so a seed key inside it is found), renamed to our key, collected as a derived
 * setting, or refused. What the sources set explicitly is recorded (`explicit`), so a derived
 * setting can refuse to contradict it.
 */
export class SeedTranslation {
  readonly derived = new Map<Derived, DerivedValue>();
  readonly explicit = new Set<string>();

  translate(entries: SourceEntry[]): SourceEntry[] {
    const issues: ConfigIssue[] = [];
    const out: SourceEntry[] = [];
    for (const entry of entries.flatMap(leaves)) {
      const found = seedNameOf(entry.path);
      // `algorithm:` holding a mapping is ours ({name, config}); only a string is the seeds'.
      const ours = !found || (found.name.name === "algorithm" && typeof entry.value !== "string");
      if (ours) {
        out.push(entry);
        this.explicit.add(entry.path.join("."));
        continue;
      }
      const { name, rest } = found;
      const written = entry.path.join(".");
      let value = entry.value;
      try {
        if (name.value) value = name.value(value);
      } catch (error) {
        issues.push({
          path: written,
          source: entry.source,
          message: `${written} (${entry.source}; seed ${name.seeds.join(", ")}: ${name.meaning}): ${(error as Error).message}`,
        });
        continue;
      }
      if ("refuse" in name.to) {
        issues.push({
          path: written,
          source: entry.source,
          message: `${written} (${entry.source}) is seed ${name.seeds.join(", ")}'s "${name.meaning}"; ${name.to.refuse}`,
        });
      } else if ("derived" in name.to) {
        this.derived.set(name.to.derived, { value, source: entry.source, name: written });
      } else {
        const key = name.to.key.endsWith(".*") ? [...name.to.key.slice(0, -2).split("."), ...rest] : name.to.key.split(".");
        out.push({ ...entry, path: key, value, ...(value === entry.value ? {} : { raw: undefined }) });
        this.explicit.add(key.join("."));
      }
    }
    if (issues.length > 0) throw new ConfigError(issues);
    return out;
  }
}

/** A mapping's leaf keys as entries of their own (the merge is key by key anyway). */
function leaves(entry: SourceEntry): SourceEntry[] {
  if (!isPlainObject(entry.value) || Object.keys(entry.value).length === 0) return [entry];
  return Object.entries(entry.value).flatMap(([key, value]) => leaves({ path: [...entry.path, key], value, source: entry.source }));
}

const DTYPES: Record<string, string> = {
  fp32: "float32",
  float32: "float32",
  "torch.float32": "float32",
  bf16: "bfloat16",
  bfloat16: "bfloat16",
  "torch.bfloat16": "bfloat16",
  auto: "auto",
};

function dtypeName(value: unknown): string {
  const name = String(value).toLowerCase();
  if (DTYPES[name]) return DTYPES[name];
  if (["fp16", "float16", "torch.float16", "half"].includes(name)) {
    throw new Error(
      "fp16 is not supported: the learner trains in float32, or in bf16 autocast on CUDA; use bf16 (with services.learner.impl=torch) or fp32",
    );
  }
  throw new Error(`${JSON.stringify(value)} is not a dtype; accepted: fp32, bf16, auto (also float32, bfloat16)`);
}

function positiveNumber(value: unknown): number {
  if (typeof value !== "number" || !(value > 0)) throw new Error(`${JSON.stringify(value)} is not a positive number`);
  return value;
}

function positiveInteger(value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
    throw new Error(`${JSON.stringify(value)} is not a positive integer`);
  return value;
}

/** A Hub dataset id cannot be fetched here; a local file can be trained on. */
function localDataset(value: unknown): string {
  const name = String(value);
  if (existsSync(name)) return name;
  throw new Error(
    `"${name}" is not a local file; Hub datasets are not downloaded here: save it as JSONL (math: one {"problem", "answer"} per line; ` +
      `Lean: {"name", "statement"}) and give its path as DATA, dataset.path=FILE or dataset.name=FILE`,
  );
}
