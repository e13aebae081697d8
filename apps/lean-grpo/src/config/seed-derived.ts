// The seed settings that need the whole config to mean what their seed means
// (seed-names.ts collects them): epochs become steps, TRL's completions per step become
// prompts per step, seed 004's reward values become the math_answer scorer's, and a
// precision becomes the PyTorch learner's dtype. Each refuses to contradict a key the
// sources set explicitly, naming both.
import { readFileSync } from "node:fs";
import { ConfigError, type ConfigIssue } from "@lean-grpo/kit";
import type { DerivedValue, SeedTranslation } from "./seed-names.js";

/** What seed-derived needs of the train file (train-command.ts TrainFile). */
export interface DerivableFile {
  dataset: { path: string; max_train_samples?: unknown };
  training?: unknown;
  reward?: unknown;
  services: Record<string, Record<string, unknown>>;
}

const TRAINING_DEFAULTS = { batch_size: 8, num_generations: 8 };

export function applySeedDerived<F extends DerivableFile>(file: F, seeds: SeedTranslation): F {
  const issues: ConfigIssue[] = [];
  const fail = (d: DerivedValue, message: string) => issues.push({ path: d.name, source: d.source, message: `${d.name}: ${message}` });
  const training = { ...((file.training ?? {}) as Record<string, unknown>) };
  const get = (key: string, fallback: number) => (typeof training[key] === "number" ? (training[key] as number) : fallback);

  const perDevice = seeds.derived.get("per_device_batch");
  const accumulation = seeds.derived.get("accumulation");
  if (perDevice || accumulation) {
    const given = (perDevice ?? accumulation)!;
    const completions = ((perDevice?.value as number | undefined) ?? 1) * ((accumulation?.value as number | undefined) ?? 1);
    const g = get("num_generations", TRAINING_DEFAULTS.num_generations);
    if (seeds.explicit.has("training.batch_size")) {
      fail(given, "sets the batch (TRL's completions per step) and so does training.batch_size; give one of them");
    } else if (completions % g !== 0) {
      fail(
        given,
        `per_device_train_batch_size × gradient_accumulation_steps = ${completions} completions per step is not a multiple of ` +
          `training.num_generations = ${g} (TRL refuses the same): make it a multiple (e.g. gradient_accumulation_steps=${Math.ceil(g / ((perDevice?.value as number | undefined) ?? 1))}), ` +
          `or give training.batch_size, the prompts per step here, e.g. training.batch_size=${Math.max(1, Math.round(completions / g))}`,
      );
    } else {
      training.batch_size = completions / g;
    }
  }

  const epochs = seeds.derived.get("epochs");
  if (epochs) {
    if (seeds.explicit.has("training.steps"))
      fail(epochs, "sets the length of the run and so does training.steps (--steps); give one of them");
    else {
      const records = datasetRecords(file.dataset.path, file.dataset.max_train_samples);
      if (records === undefined)
        fail(epochs, `counts passes over the dataset, and "${file.dataset.path}" cannot be read; give training.steps instead`);
      else training.steps = Math.max(1, Math.ceil(((epochs.value as number) * records) / get("batch_size", TRAINING_DEFAULTS.batch_size)));
    }
  }

  const rewardValues = (["correct", "wrong", "no_answer"] as const).flatMap((k) => {
    const d = seeds.derived.get(`reward_${k}`);
    return d ? [[k, d] as const] : [];
  });
  let reward = file.reward as { scorers?: Record<string, unknown>[] } | undefined;
  if (rewardValues.length > 0) {
    const scorers = reward?.scorers ?? [];
    if (scorers.some((s) => s.name === "math_answer")) {
      fail(rewardValues[0]![1], "sets the math_answer scorer's values and so does reward.scorers; give one of them");
    } else {
      const params = Object.fromEntries(rewardValues.map(([k, d]) => [k, d.value]));
      reward = { ...reward, scorers: [...scorers, { name: "math_answer", weight: 1, params }] };
    }
  }

  const services = { ...file.services };
  const dtype = seeds.derived.get("torch_dtype");
  if (dtype) {
    const learner = services.learner ?? {};
    if (learner.impl === "torch") {
      const torch = (learner.torch ?? {}) as Record<string, unknown>;
      if (torch.dtype !== undefined && torch.dtype !== dtype.value)
        fail(dtype, `is ${String(dtype.value)} but services.learner.torch.dtype is ${String(torch.dtype)}`);
      else services.learner = { ...learner, torch: { ...torch, dtype: dtype.value } };
    } else if (dtype.value === "bfloat16") {
      fail(dtype, "bf16 needs the PyTorch learner on CUDA (services.learner.impl=torch); the default learner computes in float32 (fp32)");
    }
    // float32 and auto: what the default learner does.
  }

  if (issues.length > 0) throw new ConfigError(issues);
  return { ...file, training, ...(reward === undefined ? {} : { reward }), services };
}

/** Training records of a JSONL file (non-empty lines), capped by max_train_samples; undefined if unreadable. */
function datasetRecords(file: string, max: unknown): number | undefined {
  let lines: number;
  try {
    lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "").length;
  } catch {
    return undefined;
  }
  return typeof max === "number" ? Math.min(lines, max) : lines;
}
