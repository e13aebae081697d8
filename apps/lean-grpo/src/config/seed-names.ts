// The names the seeds (the projects lean-grpo grew from) give our settings, in one place:
// each documented config key of seeds 001-004 with the meaning its seed gives it, and the
// names of TRL's GRPOConfig and transformers' TrainingArguments that their trainers take, each
// mapped onto our key, or refused with what it meant and what to type here. The train command
// applies them to every config source (file, groups, env, flags, overrides) before the schema
// sees them (translateSeedNames), then derives the settings that need the whole config
// (epochs, TRL's per-device batch, the reward values, the dtype: seed-derived.ts).
// The seeds' own command-line flags are the train command's options (train-command.ts).
import { existsSync } from "node:fs";
import { isPlainObject, type ConfigIssue, type ConfigLayer, type SourceEntry } from "@lean-grpo/kit";

export const SEEDS = {
  "001": "lean-grpo README (CLI: lean-grpo train, --algo-config, YAML with algorithm_config)",
  "002": "lean-grpo repository guide (configs/*.yaml, --lr)",
  "003": "rlvr_vocab GRPO guide (Hydra overrides, TRL GRPOConfig names, W&B logging.*)",
  "004": "GRPO RL training guide (YAML of a custom TRL trainer, --model_path / --output_dir / --max_samples)",
} as const;
export type Seed = keyof typeof SEEDS;
/** Where a name comes from: a seed that writes it, or TRL (GRPOConfig, transformers' TrainingArguments and generate()), whose names the seeds' trainers take. */
export type NameSource = Seed | "TRL";

/** "seed 003", "seed 001, 002", "TRL", "seed 004; TRL": who writes a name. */
export function sourceLabel(sources: readonly NameSource[]): string {
  const seeds = sources.filter((s): s is Seed => s !== "TRL");
  return [...(seeds.length > 0 ? [`seed ${seeds.join(", ")}`] : []), ...(sources.includes("TRL") ? ["TRL"] : [])].join("; ");
}

/** A setting that needs the whole config to resolve (seed-derived.ts). */
export const DERIVED = [
  "epochs",
  "per_device_batch",
  "accumulation",
  "reward_correct",
  "reward_wrong",
  "reward_no_answer",
  "torch_dtype",
  "gradient_checkpointing",
  "warmup_ratio",
  "lr_schedule",
  "max_prompt_length",
] as const;
export type Derived = (typeof DERIVED)[number];

/** Our key each derived setting sets, and how (for help, docs and `lean-grpo config`). */
export const DERIVED_SETS: Readonly<Record<Derived, { key: string; how: string }>> = {
  epochs: { key: "training.steps", how: "training.steps = ceil(epochs × records / training.batch_size)" },
  per_device_batch: {
    key: "training.batch_size",
    how: "training.batch_size = per_device_train_batch_size × gradient_accumulation_steps / training.num_generations",
  },
  accumulation: { key: "training.batch_size", how: "training.batch_size (with per_device_train_batch_size)" },
  reward_correct: { key: "reward.scorers", how: "reward.scorers: math_answer params.correct" },
  reward_wrong: { key: "reward.scorers", how: "reward.scorers: math_answer params.wrong" },
  reward_no_answer: { key: "reward.scorers", how: "reward.scorers: math_answer params.no_answer" },
  torch_dtype: {
    key: "services.learner.torch.dtype",
    how: "services.learner.torch.dtype with services.learner.impl=torch (bf16 on CUDA); fp32 is the default learner's",
  },
  gradient_checkpointing: {
    key: "services.learner.torch.gradient_checkpointing",
    how: "services.learner.torch.gradient_checkpointing with services.learner.impl=torch",
  },
  warmup_ratio: {
    key: "services.learner.optimizer.warmup_steps",
    how: "services.learner.optimizer.warmup_steps = round(ratio × training.steps)",
  },
  lr_schedule: {
    key: "services.learner.optimizer.lr_schedule",
    how: "services.learner.optimizer.lr_schedule (constant | linear | cosine), with optimizer.total_steps = training.steps unless set",
  },
  max_prompt_length: {
    key: "training.max_tokens",
    how: "a check before the run starts: every record's prompt at most N tokens (prompts are never cut), as prompt plus training.max_tokens must fit the model's context",
  },
};

export interface SeedName {
  seeds: readonly NameSource[];
  /** The key as the seed writes it; `.*` at the end: every key under it. */
  name: string;
  /** What it means in the seed. */
  meaning: string;
  /**
   * Our key it sets (dotted); or a derived setting; or nothing (`none`: the values `value`
   * accepts are what happens here anyway); or a refusal: what to type here instead.
   */
  to: { key: string } | { derived: Derived } | { none: string } | { refuse: string };
  /** Converts or checks the value (throws a message on a bad one). */
  value?: (value: unknown) => unknown;
}

const LR = "services.learner.optimizer.learning_rate";
const MODEL_DIR = { key: "model.dir" };
const HUB =
  "a local Hugging Face model directory (config.json, tokenizer, safetensors); a Hub id is not downloaded: " +
  "huggingface-cli download ORG/NAME --local-dir models/NAME, then model.dir=models/NAME";
const FP16 =
  "fp16 is not supported: the learner trains in float32, or in bf16 autocast on CUDA; use bf16 " +
  "(training.bf16=true or model.model_kwargs.torch_dtype=bf16, with services.learner.impl=torch) or fp32";

/**
 * A TRL / transformers name as seeds write it both ways: at the top level (seed 004's YAML) and
 * under `training.` (seed 003's Hydra group). `top` and `nested` say who writes each spelling.
 */
function bothSpellings(
  name: string,
  sources: { top: readonly NameSource[]; nested: readonly NameSource[] },
  rest: Omit<SeedName, "seeds" | "name">,
): SeedName[] {
  return [
    { seeds: sources.top, name, ...rest },
    { seeds: sources.nested, name: `training.${name}`, ...rest },
  ];
}
const TRL = ["TRL"] as const;

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
  { seeds: TRL, name: "model.generation_kwargs.top_p", meaning: "nucleus sampling (generate())", to: { key: "training.top_p" } },
  { seeds: TRL, name: "model.generation_kwargs.top_k", meaning: "top-k sampling (generate())", to: { key: "training.top_k" } },
  { seeds: ["004"], name: "max_new_tokens", meaning: "tokens per completion", to: { key: "training.max_tokens" } },
  ...bothSpellings(
    "max_completion_length",
    { top: TRL, nested: TRL },
    { meaning: "tokens per completion", to: { key: "training.max_tokens" } },
  ),
  { seeds: ["004"], name: "temperature", meaning: "sampling temperature", to: { key: "training.temperature" } },
  { seeds: ["004"], name: "top_p", meaning: "nucleus sampling", to: { key: "training.top_p" } },
  { seeds: TRL, name: "top_k", meaning: "top-k sampling", to: { key: "training.top_k" } },
  // LoRA.
  { seeds: ["004"], name: "lora_r", meaning: "LoRA rank", to: { key: "services.learner.lora.rank" } },
  { seeds: ["002"], name: "lora_rank", meaning: "LoRA rank", to: { key: "services.learner.lora.rank" } },
  { seeds: ["004"], name: "lora_alpha", meaning: "LoRA alpha (scale alpha / rank)", to: { key: "services.learner.lora.alpha" } },
  { seeds: ["004"], name: "lora_dropout", meaning: "dropout on the LoRA input", to: { key: "services.learner.lora.dropout" } },
  // Algorithm.
  {
    seeds: ["001", "002"],
    name: "algorithm",
    meaning: "the algorithm by name (a string in the seeds' YAML; any case: DGPO is dgpo)",
    to: { key: "algorithm.name" },
  },
  { seeds: ["001", "002"], name: "algorithm_config.*", meaning: "the algorithm's knobs", to: { key: "algorithm.config.*" } },
  { seeds: ["004"], name: "kl_coef", meaning: "KL penalty coefficient against the reference model", to: { key: "algorithm.config.beta" } },
  ...bothSpellings("beta", { top: TRL, nested: TRL }, { meaning: "KL penalty coefficient", to: { key: "algorithm.config.beta" } }),
  ...["epsilon", "epsilon_high", "scale_rewards", "num_iterations"].flatMap((knob) =>
    bothSpellings(
      knob,
      { top: TRL, nested: TRL },
      { meaning: `GRPOConfig's ${knob}, the algorithm's knob`, to: { key: `algorithm.config.${knob}` } },
    ),
  ),
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
  ...bothSpellings("learning_rate", { top: ["001", "002", "004"], nested: ["003"] }, { meaning: "AdamW learning rate", to: { key: LR } }),
  ...bothSpellings(
    "num_train_epochs",
    { top: ["002"], nested: ["003"] },
    {
      meaning: "passes over the training set: training.steps = ceil(epochs × records / training.batch_size)",
      to: { derived: "epochs" },
      value: positiveNumber,
    },
  ),
  ...bothSpellings("max_steps", { top: TRL, nested: TRL }, { meaning: "optimizer steps of the run", to: { key: "training.steps" } }),
  ...bothSpellings(
    "per_device_train_batch_size",
    { top: ["004"], nested: ["003"] },
    {
      meaning:
        "completions per device per micro-step (TRL): with gradient_accumulation_steps, completions per optimizer step; " +
        "training.batch_size (prompts) = per_device_train_batch_size × gradient_accumulation_steps / training.num_generations",
      to: { derived: "per_device_batch" },
      value: positiveInteger,
    },
  ),
  ...bothSpellings(
    "gradient_accumulation_steps",
    { top: ["004"], nested: ["003"] },
    {
      meaning:
        "micro-steps per optimizer step (TRL); see per_device_train_batch_size (the learner splits a step into micro-batches itself: services.learner.micro_batch_tokens)",
      to: { derived: "accumulation" },
      value: positiveInteger,
    },
  ),
  {
    seeds: ["004"],
    name: "num_epochs",
    meaning: "passes over the training set (as num_train_epochs)",
    to: { derived: "epochs" },
    value: positiveNumber,
  },
  { seeds: ["002"], name: "max_proof_steps", meaning: "tactics per proof attempt (tactic mode)", to: { key: "training.max_proof_steps" } },
  { seeds: TRL, name: "seed", meaning: "the run's random seed", to: { key: "training.seed" } },
  // Precision and memory (TrainingArguments): the PyTorch learner's.
  ...bothSpellings(
    "gradient_checkpointing",
    { top: ["004"], nested: ["003"] },
    {
      meaning: "recompute each layer's activations in the backward pass instead of keeping them (less memory)",
      to: { derived: "gradient_checkpointing" },
      value: boolean,
    },
  ),
  ...bothSpellings(
    "bf16",
    { top: TRL, nested: ["003"] },
    {
      meaning: "train in bf16 mixed precision (true) or float32 (false)",
      to: { derived: "torch_dtype" },
      value: (v) => (boolean(v) ? "bfloat16" : "float32"),
    },
  ),
  ...bothSpellings(
    "fp16",
    { top: ["004"], nested: TRL },
    {
      meaning: "train in fp16 mixed precision",
      to: { none: "false only: float32, or bf16 autocast on CUDA, is what the learner trains in" },
      value: (v) => {
        if (boolean(v)) throw new Error(FP16);
        return v;
      },
    },
  ),
  // Optimizer (TrainingArguments).
  ...bothSpellings(
    "max_grad_norm",
    { top: TRL, nested: TRL },
    { meaning: "gradient clipping (global norm)", to: { key: "services.learner.optimizer.max_grad_norm" } },
  ),
  ...bothSpellings(
    "weight_decay",
    { top: TRL, nested: TRL },
    { meaning: "AdamW weight decay", to: { key: "services.learner.optimizer.weight_decay" } },
  ),
  ...bothSpellings("adam_beta1", { top: TRL, nested: TRL }, { meaning: "AdamW beta1", to: { key: "services.learner.optimizer.beta1" } }),
  ...bothSpellings("adam_beta2", { top: TRL, nested: TRL }, { meaning: "AdamW beta2", to: { key: "services.learner.optimizer.beta2" } }),
  ...bothSpellings(
    "adam_epsilon",
    { top: TRL, nested: TRL },
    { meaning: "AdamW epsilon", to: { key: "services.learner.optimizer.epsilon" } },
  ),
  ...bothSpellings(
    "warmup_steps",
    { top: TRL, nested: TRL },
    { meaning: "linear warm-up steps", to: { key: "services.learner.optimizer.warmup_steps" } },
  ),
  ...bothSpellings(
    "warmup_ratio",
    { top: TRL, nested: TRL },
    { meaning: "linear warm-up as a share of the run's steps", to: { derived: "warmup_ratio" }, value: ratio },
  ),
  ...bothSpellings(
    "lr_scheduler_type",
    { top: TRL, nested: TRL },
    { meaning: "the learning-rate schedule after warm-up", to: { derived: "lr_schedule" }, value: scheduleName },
  ),
  // Checkpoints, evaluation, logging (TrainingArguments).
  ...bothSpellings(
    "save_steps",
    { top: TRL, nested: TRL },
    { meaning: "checkpoint every N steps", to: { key: "training.checkpoint_every" } },
  ),
  ...bothSpellings("eval_steps", { top: TRL, nested: TRL }, { meaning: "evaluate every N steps", to: { key: "eval.every" } }),
  ...bothSpellings(
    "logging_steps",
    { top: ["004"], nested: TRL },
    {
      meaning: "log metrics every N steps",
      to: {
        refuse:
          "every step is logged here: the progress line, runs/<id>/steps.jsonl and the trackers (logging.*) each get every step's metrics, so there is no interval to set; the held-out evaluation's interval is eval.every",
      },
    },
  ),
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
    meaning: "a system turn before each problem (chat format)",
    to: { key: "prompt.system" },
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
  {
    seeds: TRL,
    name: "training.output_dir",
    meaning: "where the run's files go (here each run is a directory under it)",
    to: { key: "runs_dir" },
  },
  ...bothSpellings(
    "report_to",
    { top: TRL, nested: TRL },
    { meaning: "trackers: wandb, tensorboard, all, none", to: { key: "logging.report_to" } },
  ),
  ...bothSpellings("run_name", { top: TRL, nested: TRL }, { meaning: "the tracked run's display name", to: { key: "logging.name" } }),
  // More of TRL's GRPOConfig / TrainingArguments: each acts, or says what it is here.
  ...bothSpellings(
    "loss_type",
    { top: TRL, nested: TRL },
    {
      meaning:
        "how the policy loss is aggregated (grpo, dr_grpo, dapo, bnpo, cispo, sapo); here the loss is the algorithm's, so it chooses the algorithm of that loss " +
        "(dapo also brings DAPO's clip-higher and dynamic sampling: training.dynamic_sampling=false turns the latter off)",
      to: { key: "algorithm.name" },
      value: lossAlgorithm,
    },
  ),
  ...bothSpellings(
    "max_prompt_length",
    { top: TRL, nested: TRL },
    {
      meaning:
        "the most tokens of a prompt (TRL cuts longer prompts from the left); here prompts are never cut, as a cut problem is another problem: " +
        "every record's prompt is checked before the run starts and one longer than this is refused, naming it",
      to: { derived: "max_prompt_length" },
      value: positiveInteger,
    },
  ),
  ...bothSpellings(
    "use_vllm",
    { top: TRL, nested: TRL },
    {
      meaning: "sample with vLLM (true) or with the trainer's own model (false)",
      to: { key: "services.inference.backend" },
      value: (v) => (boolean(v) ? "vllm" : "embedded"),
    },
  ),
  ...bothSpellings(
    "log_completions",
    { top: TRL, nested: TRL },
    {
      meaning:
        "log a few completions each step; here: report.samples_per_step completions a step (4 unless set) go to runs/<id>/samples.jsonl, the dashboard, the step events and the trackers; false keeps none",
      to: { key: "report.samples_per_step" },
      value: (v) => (boolean(v) ? 4 : 0),
    },
  ),
  ...bothSpellings(
    "optim",
    { top: TRL, nested: TRL },
    {
      meaning: "the optimizer by name (adamw_torch, adamw_torch_fused, adamw_hf, adafactor, adamw_8bit, ...)",
      to: { none: "an AdamW name only: AdamW is the learners' optimizer (services.learner.optimizer.*)" },
      value: optimizerName,
    },
  ),
  ...bothSpellings(
    "save_strategy",
    { top: TRL, nested: TRL },
    {
      meaning: "when checkpoints are saved: steps (every save_steps), epoch, no",
      to: { none: "steps only: a run checkpoints every training.checkpoint_every steps (save_steps) and at its end" },
      value: strategy(
        "save_strategy",
        "a run checkpoints every training.checkpoint_every steps (save_steps) and at its end, which is what --resume continues from",
        "training.checkpoint_every",
        "they cannot be turned off; set training.checkpoint_every=N to save less often",
      ),
    },
  ),
  ...["eval_strategy", "evaluation_strategy"].flatMap((name) =>
    bothSpellings(
      name,
      { top: TRL, nested: TRL },
      {
        meaning: "when the held-out set is evaluated: steps (every eval_steps), epoch, no",
        to: {
          none: "steps only: the held-out set (eval.data) is evaluated before the first step, every eval.every steps (eval_steps) and after the last",
        },
        value: strategy(
          name,
          "the held-out set (eval.data) is evaluated before the first step, every eval.every steps (eval_steps) and after the last; without eval.data there is no evaluation",
          "eval.every",
          "leave eval.data unset for a run without evaluation",
        ),
      },
    ),
  ),
  ...bothSpellings(
    "save_total_limit",
    { top: TRL, nested: TRL },
    {
      meaning: "keep at most N checkpoints, deleting older ones",
      to: {
        refuse:
          "every checkpoint of a run is kept (runs/<id>/checkpoints/step-N: the adapter and the optimizer state), so any of them can be evaluated " +
          "(lean-grpo eval --checkpoint) or resumed from; save fewer with training.checkpoint_every=N (the orchestrator caps a run at run_limits.max_checkpoints), " +
          "and delete the ones you do not need",
      },
    },
  ),
  ...bothSpellings(
    "tf32",
    { top: TRL, nested: TRL },
    {
      meaning: "allow TF32 matrix multiplies on Ampere and later NVIDIA GPUs",
      to: { none: "false only: the learners compute in float32 (or bf16 autocast on CUDA with services.learner.torch.dtype)" },
      value: (v) => {
        if (boolean(v))
          throw new Error(
            "TF32 has no setting here: the default learner computes in float32 on the CPU, and the PyTorch learner in float32 or bf16 autocast " +
              "(services.learner.impl=torch services.learner.torch.dtype=bfloat16 is the faster precision on CUDA)",
          );
        return v;
      },
    },
  ),
  ...bothSpellings(
    "logging_dir",
    { top: TRL, nested: TRL },
    {
      meaning: "TensorBoard's log folder",
      to: {
        refuse:
          "TensorBoard's event files are written in each run's own folder, runs/<id>/tensorboard (logging.report_to=tensorboard), beside its other files; " +
          "`tensorboard --logdir RUNS_DIR` shows every run; to put the runs elsewhere set runs_dir (seed 004's --output_dir)",
      },
    },
  ),
];

/** What a seed name does here, in words: the key it sets, how a derived one is computed, or what to type instead. */
export function seedNameTarget(name: SeedName): string {
  const to = name.to;
  if ("key" in to) return to.key;
  if ("derived" in to) return DERIVED_SETS[to.derived].how;
  if ("none" in to) return `nothing to set (${to.none})`;
  return `refused: ${to.refuse}`;
}

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
  /** The layer of its source: a key of ours given on a higher layer wins over it, one on the same layer is a conflict. */
  layer: ConfigLayer;
  /** As written, e.g. num_epochs. */
  name: string;
}

/** Where a key of ours was set last: its source and layer. */
export interface ExplicitKey {
  source: string;
  layer: ConfigLayer;
}

/**
 * Applies the seed names to config entries: one per leaf key (a file's mapping is split into
 * its keys, so a seed key inside it is found), renamed to our key, collected as a derived
 * setting, or refused. What the sources set explicitly is recorded with its layer
 * (`explicit`), so a derived setting can yield to a higher layer and refuse to contradict its own.
 * A refused name is kept in `issues` and left out, so the rest of the config is still composed
 * and checked: the pre-flight reports every problem at once.
 */
export class SeedTranslation {
  readonly derived = new Map<Derived, DerivedValue>();
  readonly explicit = new Map<string, ExplicitKey>();
  readonly issues: ConfigIssue[] = [];

  translate(entries: SourceEntry[]): SourceEntry[] {
    const issues = this.issues;
    const out: SourceEntry[] = [];
    for (const entry of entries.flatMap(leaves)) {
      const found = seedNameOf(entry.path);
      // `algorithm:` holding a mapping is ours ({name, config}); only a string is the seeds'.
      const ours = !found || (found.name.name === "algorithm" && typeof entry.value !== "string");
      if (ours) {
        out.push(entry);
        this.explicit.set(entry.path.join("."), { source: entry.source, layer: entry.layer });
        continue;
      }
      const { name, rest } = found;
      const written = entry.path.join(".");
      const label = sourceLabel(name.seeds);
      let value = entry.value;
      try {
        if (name.value) value = name.value(value);
      } catch (error) {
        issues.push({
          path: written,
          source: entry.source,
          message: `${written} (${entry.source}; ${label}: ${name.meaning}): ${(error as Error).message}`,
        });
        continue;
      }
      if ("refuse" in name.to) {
        issues.push({
          path: written,
          source: entry.source,
          message: `${written} (${entry.source}) is ${label}'s "${name.meaning}"; ${name.to.refuse}`,
        });
      } else if ("derived" in name.to) {
        this.derived.set(name.to.derived, { value, source: entry.source, layer: entry.layer, name: written });
      } else if ("key" in name.to) {
        const key = name.to.key.endsWith(".*") ? [...name.to.key.slice(0, -2).split("."), ...rest] : name.to.key.split(".");
        out.push({ ...entry, path: key, value, ...(value === entry.value ? {} : { raw: undefined }) });
        this.explicit.set(key.join("."), { source: entry.source, layer: entry.layer });
      }
      // `none`: the value is what happens here anyway; nothing to set.
    }
    return out;
  }
}

/** A mapping's leaf keys as entries of their own (the merge is key by key anyway). */
function leaves(entry: SourceEntry): SourceEntry[] {
  if (!isPlainObject(entry.value) || Object.keys(entry.value).length === 0) return [entry];
  return Object.entries(entry.value).flatMap(([key, value]) =>
    leaves({ path: [...entry.path, key], value, source: entry.source, layer: entry.layer }),
  );
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
  if (["fp16", "float16", "torch.float16", "half"].includes(name)) throw new Error(FP16);
  throw new Error(`${JSON.stringify(value)} is not a dtype; accepted: fp32, bf16, auto (also float32, bfloat16)`);
}

function boolean(value: unknown): boolean {
  if (typeof value !== "boolean") throw new Error(`${JSON.stringify(value)} is not true or false`);
  return value;
}

function ratio(value: unknown): number {
  if (typeof value !== "number" || !(value >= 0 && value < 1)) throw new Error(`${JSON.stringify(value)} is not a number in [0, 1)`);
  return value;
}

/** TRL's lr_scheduler_type names that are a schedule here (transformers' get_*_schedule_with_warmup). */
const SCHEDULES: Record<string, string> = { constant: "constant", constant_with_warmup: "constant", linear: "linear", cosine: "cosine" };

function scheduleName(value: unknown): string {
  const schedule = SCHEDULES[String(value)];
  if (schedule) return schedule;
  throw new Error(`${JSON.stringify(value)} is not a schedule here; accepted: ${Object.keys(SCHEDULES).join(", ")}`);
}

/** TRL's loss_type names and the algorithm here whose loss it is. */
const LOSS_ALGORITHMS: Record<string, string> = { grpo: "grpo", dr_grpo: "drgrpo", dapo: "dapo", cispo: "cispo", sapo: "sapo" };

function lossAlgorithm(value: unknown): string {
  const algorithm = LOSS_ALGORITHMS[String(value).toLowerCase()];
  if (algorithm) return algorithm;
  if (String(value).toLowerCase() === "bnpo")
    throw new Error(
      "bnpo (the loss normalised by the batch's tokens) is not one of the algorithms here; the nearest is dapo (normalised by the group's tokens): loss_type=dapo or --algorithm dapo",
    );
  throw new Error(
    `${JSON.stringify(value)} is not a loss type here; accepted: ${Object.entries(LOSS_ALGORITHMS)
      .map(([loss, algorithm]) => (loss === algorithm ? loss : `${loss} (${algorithm})`))
      .join(", ")} (lean-grpo algorithms lists them)`,
  );
}

function optimizerName(value: unknown): unknown {
  if (/^adamw/u.test(String(value)) && !/8bit|4bit|bnb|anyprecision|apex/u.test(String(value))) return value;
  throw new Error(
    `${JSON.stringify(value)}: the learners' optimizer is AdamW in float32 state (services.learner.optimizer.learning_rate, beta1, beta2, epsilon, weight_decay, max_grad_norm); ` +
      "accepted: adamw_torch, adamw_torch_fused, adamw_hf (all the same AdamW here), or leave optim out",
  );
}

/** TRL's save_strategy / eval_strategy: "steps" is what happens here; "epoch" and "no" say what to type. */
function strategy(name: string, here: string, everyKey: string, instead: string): (value: unknown) => unknown {
  return (value) => {
    if (value === "steps") return value;
    if (value === "epoch")
      throw new Error(`${here}; for once an epoch set ${everyKey} to the steps of an epoch (records / training.batch_size)`);
    if (value === "no") throw new Error(`${here}; ${instead}`);
    throw new Error(`${JSON.stringify(value)} is not a ${name}; accepted: steps (${here})`);
  };
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
