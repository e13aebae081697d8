// The seed settings that need the whole config to mean what their seed means
// (seed-names.ts collects them): epochs become steps, TRL's completions per step become
// prompts per step, seed 004's reward values become the math_answer scorer's, a precision
// becomes the PyTorch learner's dtype, and TRL's warm-up ratio and schedule become the
// optimizer's. Each follows the layers every key follows (command line > env > file > group):
// our key set on a higher layer wins over the derived setting, a lower one gives way to it,
// and the two on the same layer are refused, naming both.
import { CONFIG_LAYERS, ConfigError, type ConfigIssue } from "@lean-grpo/kit";
import { DERIVED_SETS, type DerivedValue, type SeedTranslation } from "./seed-names.js";

/** What seed-derived needs of the train file (train-command.ts TrainFile). */
export interface DerivableFile {
  dataset: { path: string; max_train_samples?: unknown };
  training?: unknown;
  reward?: unknown;
  services: Record<string, Record<string, unknown> | undefined>;
}

const TRAINING_DEFAULTS = { batch_size: 8, num_generations: 8, steps: 100 };

type Winner = "derived" | "ours";

/**
 * The file with every derived setting applied. One that cannot be applied is an issue: pushed to
 * `issues` when given (the others still apply, so the pre-flight goes on), else thrown.
 */
export function applySeedDerived<F extends DerivableFile>(
  file: F,
  seeds: SeedTranslation,
  sink?: ConfigIssue[],
  /** The dataset's records (dataset-size.ts), for epochs, or why it could not be read. */
  datasetRecords?: number | Error,
): F {
  const issues: ConfigIssue[] = [];
  const fail = (d: DerivedValue, message: string) => issues.push({ path: d.name, source: d.source, message: `${d.name}: ${message}` });
  /** Which of a derived setting and our key (which may have been set explicitly) holds, by their layers. */
  const winner = (d: DerivedValue, key: string, what: string): Winner | undefined => {
    const ours = seeds.explicit.get(key);
    if (!ours) return "derived";
    const [derivedRank, oursRank] = [CONFIG_LAYERS.indexOf(d.layer), CONFIG_LAYERS.indexOf(ours.layer)];
    if (derivedRank !== oursRank) return derivedRank > oursRank ? "derived" : "ours";
    fail(
      d,
      `sets ${what} and so does ${key} (${ours.source}), both on the ${d.layer}; give one of them (the command line wins over a file, a file over a group)`,
    );
    return undefined;
  };
  const training = { ...((file.training ?? {}) as Record<string, unknown>) };
  const get = (key: keyof typeof TRAINING_DEFAULTS) =>
    typeof training[key] === "number" ? (training[key] as number) : TRAINING_DEFAULTS[key];

  const perDevice = seeds.derived.get("per_device_batch");
  const accumulation = seeds.derived.get("accumulation");
  if (perDevice || accumulation) {
    // The later (higher) of the two speaks for the pair.
    const given = [perDevice, accumulation]
      .filter((d) => d !== undefined)
      .sort(byLayer)
      .at(-1)!;
    const completions = ((perDevice?.value as number | undefined) ?? 1) * ((accumulation?.value as number | undefined) ?? 1);
    const g = get("num_generations");
    if (winner(given, "training.batch_size", "the batch (TRL's completions per step)") === "derived") {
      if (completions % g !== 0) {
        fail(
          given,
          `per_device_train_batch_size × gradient_accumulation_steps = ${completions} completions per step is not a multiple of ` +
            `training.num_generations = ${g} (TRL refuses the same): make it a multiple (e.g. gradient_accumulation_steps=${Math.ceil(g / ((perDevice?.value as number | undefined) ?? 1))}), ` +
            `or give training.batch_size, the prompts per step here, e.g. training.batch_size=${Math.max(1, Math.round(completions / g))}`,
        );
      } else training.batch_size = completions / g;
    }
  }

  const epochs = seeds.derived.get("epochs");
  if (epochs && winner(epochs, "training.steps", "the length of the run") === "derived") {
    const records = datasetRecords ?? new Error("its records were not counted");
    if (records instanceof Error)
      fail(
        epochs,
        `counts passes over the dataset, and "${file.dataset.path}" cannot be read (${records.message}); give training.steps instead`,
      );
    else training.steps = Math.max(1, Math.ceil(((epochs.value as number) * records) / get("batch_size")));
  }

  const rewardValues = (["correct", "wrong", "no_answer"] as const).flatMap((k) => {
    const d = seeds.derived.get(`reward_${k}`);
    return d ? [[k, d] as const] : [];
  });
  let reward = file.reward as { scorers?: Record<string, unknown>[] } | undefined;
  const rewardSource = rewardValues
    .map(([, d]) => d)
    .sort(byLayer)
    .at(-1);
  if (rewardSource && winner(rewardSource, "reward.scorers", "the math_answer scorer's values") === "derived") {
    const scorers = (reward?.scorers ?? []).filter((s) => s.name !== "math_answer");
    const params = Object.fromEntries(rewardValues.map(([k, d]) => [k, d.value]));
    reward = { ...reward, scorers: [...scorers, { name: "math_answer", weight: 1, params }] };
  }

  const services = { ...file.services };
  const learner = { ...(services.learner ?? {}) };
  const torch = { ...((learner.torch ?? {}) as Record<string, unknown>) };
  const optimizer = { ...((learner.optimizer ?? {}) as Record<string, unknown>) };
  const onTorch = learner.impl === "torch";
  const dtype = seeds.derived.get("torch_dtype");
  if (dtype && winner(dtype, DERIVED_SETS.torch_dtype.key, "the learner's dtype") === "derived") {
    if (onTorch) torch.dtype = dtype.value;
    else if (dtype.value === "bfloat16")
      fail(dtype, "bf16 needs the PyTorch learner on CUDA (services.learner.impl=torch); the default learner computes in float32 (fp32)");
    // float32 and auto: what the default learner does.
  }
  const checkpointing = seeds.derived.get("gradient_checkpointing");
  if (checkpointing && winner(checkpointing, DERIVED_SETS.gradient_checkpointing.key, "gradient checkpointing") === "derived") {
    if (onTorch) torch.gradient_checkpointing = checkpointing.value;
    else if (checkpointing.value === true)
      fail(
        checkpointing,
        "gradient checkpointing is the PyTorch learner's (services.learner.impl=torch sets services.learner.torch.gradient_checkpointing); " +
          "the default learner keeps each micro-batch's activations, bounded by services.learner.micro_batch_tokens",
      );
  }
  const warmup = seeds.derived.get("warmup_ratio");
  if (warmup && winner(warmup, DERIVED_SETS.warmup_ratio.key, "the warm-up") === "derived")
    optimizer.warmup_steps = Math.round((warmup.value as number) * get("steps"));
  const schedule = seeds.derived.get("lr_schedule");
  if (schedule && winner(schedule, DERIVED_SETS.lr_schedule.key, "the learning-rate schedule") === "derived") {
    optimizer.lr_schedule = schedule.value;
    // TRL's schedules reach 0 at the end of the run.
    if (!seeds.explicit.has("services.learner.optimizer.total_steps")) optimizer.total_steps = get("steps");
  }
  if (Object.keys(torch).length > 0) learner.torch = torch;
  if (Object.keys(optimizer).length > 0) learner.optimizer = optimizer;
  if (Object.keys(learner).length > 0) services.learner = learner;

  if (sink) sink.push(...issues);
  else if (issues.length > 0) throw new ConfigError(issues);
  return { ...file, training, ...(reward === undefined ? {} : { reward }), services };
}

function byLayer(a: DerivedValue, b: DerivedValue): number {
  return CONFIG_LAYERS.indexOf(a.layer) - CONFIG_LAYERS.indexOf(b.layer);
}
