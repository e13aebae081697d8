// The config of `lean-grpo train`, composed as the seeds' Hydra configs are:
//   defaults < groups (model=..., dataset=..., algorithm=...) < --config FILE < LEANGRPO_* env < flags < dotted overrides.
// Groups live in the config directory: --config-dir, else LEANGRPO_CONFIG_DIR, else ./configs
// when it has groups, else the configs/ folder of this repository.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ConfigError, listGroups, listOptions, loadConfig, splitGroupChoices, type SourceEntry } from "@lean-grpo/kit";
import { defaultReasoningMap, REASONING_MAP_FILE } from "@lean-grpo/lm/reasoning-vocab";
import { RunConfigShapeError, runConfigToMessage, type RunConfigMessage } from "@lean-grpo/orchestrator";
import type { TrainFile, TrainFileSchema } from "./train-file.js";

const REPO_CONFIGS = fileURLToPath(new URL("../../../../configs/", import.meta.url));

export function configDir(explicit?: string): string {
  if (explicit) return explicit;
  if (process.env.LEANGRPO_CONFIG_DIR) return process.env.LEANGRPO_CONFIG_DIR;
  return listGroups("configs").length > 0 ? "configs" : REPO_CONFIGS;
}

export interface TrainConfigSources {
  /** `--config FILE`. */
  file?: string;
  /** The words after the dataset: `group=option` choices and `key.path=value` overrides. */
  words: readonly string[];
  /** Flags by the dotted key they set, and how each was typed (for errors). */
  flags: Record<string, unknown>;
  flagNames: Record<string, string>;
  configDir?: string;
  /** Rewrites every source's entries before they merge (the seeds' names: config/seed-names.ts). */
  translate?: (entries: SourceEntry[]) => SourceEntry[];
}

export function loadTrainConfig(schema: typeof TrainFileSchema, sources: TrainConfigSources): TrainFile {
  const root = configDir(sources.configDir);
  const { choices, overrides } = splitGroupChoices(sources.words, root);
  return loadConfig(schema, {
    file: sources.file,
    groups: { root, choices },
    envPrefix: "LEANGRPO_TRAIN_",
    flags: sources.flags,
    flagNames: sources.flagNames,
    overrides,
    ...(sources.translate ? { translate: sources.translate } : {}),
  });
}

const ModelGroupShape = z.looseObject({ model: z.looseObject({ dir: z.string().optional() }).optional() });

/**
 * The model group (configs/model/NAME.yaml) whose model.dir is `dir`, if any: naming the model
 * directory (the default, a data file's run, --model_path) brings what its group carries (the
 * learner settings the model was tuned with), as choosing model=NAME does.
 */
export function modelGroupOf(dir: string, root: string): string | undefined {
  for (const option of listOptions(root, "model")) {
    let loaded: z.output<typeof ModelGroupShape>;
    try {
      loaded = loadConfig(ModelGroupShape, { groups: { root, choices: [{ group: "model", option }] } });
    } catch {
      continue; // a broken group is reported when it is chosen
    }
    if (loaded.model?.dir !== undefined && path.normalize(loaded.model.dir) === path.normalize(dir)) return option;
  }
  return undefined;
}

/**
 * The train file's run sections as StartRun's typed run_config: the file without the CLI's
 * own keys (model, runs_dir, services, dataset.path). Keys the message has no place for
 * are a ConfigError naming them; values are the orchestrator's to check (StartRun).
 */
export function trainRunConfig(file: TrainFile): RunConfigMessage {
  const { model, runs_dir: _runsDir, services: _services, logging: _logging, dataset, ...run } = file;
  const { path: _path, ...datasetRun } = dataset;
  try {
    // Of `model:`, the run carries the mask (sent with every Generate and TrainStep); the rest configures the services.
    return runConfigToMessage({ ...run, dataset: datasetRun, model: { reasoning_mask: model.reasoning_mask } });
  } catch (error) {
    if (error instanceof RunConfigShapeError) {
      const hint = /unknown key/u.test(error.message)
        ? " (the seeds' and TRL's names that set a key here are listed by lean-grpo train --help; lean-grpo config NAME says what one sets)"
        : "";
      throw new ConfigError([{ path: error.path, source: "train config", message: `${error.message}${hint}` }]);
    }
    throw error;
  }
}

/**
 * The model directory must be there before any service starts: a Hugging Face directory with
 * a config.json. The error names the value, what is accepted and the choices at hand.
 */
export function checkModelDir(dir: string, root: string): void {
  if (existsSync(path.join(dir, "config.json"))) return;
  // The seeds name models by Hub id (model.name=Qwen/Qwen2.5-1.5B, base_model); nothing is downloaded here.
  // ORG/NAME whose ORG is a local folder (models/nope) is a local path that is missing, not a Hub id.
  if (!existsSync(dir) && /^[\w.-]+\/[\w.-]+$/.test(dir) && !existsSync(dir.split("/")[0]!)) {
    const local = `models/${dir.split("/")[1]}`;
    throw new ConfigError([
      {
        path: "model.dir",
        source: "model",
        message:
          `model.dir "${dir}" (also set as model.name, model.path, base_model or --model_path) looks like a Hugging Face Hub id and is not a local directory; ` +
          `models are not downloaded here: fetch it with \`huggingface-cli download ${dir} --local-dir ${local}\` and set model.dir=${local} (or model.name=${local})`,
      },
    ]);
  }
  const problem = existsSync(dir) ? `"${dir}" has no config.json (not a Hugging Face model directory)` : `"${dir}" does not exist`;
  const models = existsSync("models")
    ? readdirSync("models").filter(
        (name) => statSync(path.join("models", name)).isDirectory() && existsSync(path.join("models", name, "config.json")),
      )
    : [];
  const groups = listGroups(root).includes("model") ? readdirSync(path.join(root, "model")).map((f) => f.replace(/\.ya?ml$/, "")) : [];
  throw new ConfigError([
    {
      path: "model.dir",
      source: "model",
      message:
        `model.dir ${problem}; set model.dir=DIR to a Qwen2, Qwen3 or Llama model directory` +
        // Seed 004 resumes by pointing its model path at a checkpoint.
        (/checkpoint/i.test(dir)
          ? "; to continue a run from its last checkpoint: lean-grpo train --resume RUN (the run's id under runs_dir)"
          : "") +
        (models.length > 0 ? ` (here: ${models.map((m) => `models/${m}`).join(", ")})` : "") +
        (groups.length > 0 ? ` or choose model=NAME (${groups.join(", ")})` : ""),
    },
  ]);
}

/**
 * The training file must be there before any service starts. A Hub dataset id (the seeds'
 * dataset.name, e.g. agentica-org/DeepScaleR-Preview-Dataset) is not downloaded: the error
 * says how to give a local file.
 */
export function checkDatasetFile(file: string): void {
  if (existsSync(file)) return;
  const hub = /^[\w.-]+\/[\w.-]+$/.test(file) && !/\.jsonl?$/.test(file);
  throw new ConfigError([
    {
      path: "dataset.path",
      source: "dataset",
      message: hub
        ? `dataset "${file}" looks like a Hugging Face Hub dataset id and is not a local file; datasets are not downloaded here: ` +
          `save it as JSONL (math: one {"problem", "answer"} per line; Lean: {"name", "statement"}) and give its path as DATA or dataset.path=FILE`
        : `dataset "${file}" does not exist; give a JSONL file as DATA or dataset.path=FILE, or choose dataset=NAME (configs/dataset)`,
    },
  ]);
}

/**
 * A reasoning vocabulary larger than the model's standard one (without a map that repeats
 * sources) is refused before any service starts, naming the key. The markers and a given map
 * are checked by the services as they load the model's tokenizer.
 */
export function checkReasoningSize(model: TrainFile["model"]): void {
  if (model.reasoning_vocab_size === 0 || model.reasoning_map !== undefined) return;
  if (existsSync(path.join(model.dir, REASONING_MAP_FILE))) return; // an expanded base: its map decides n_s
  let standardSize: unknown;
  try {
    standardSize = (JSON.parse(readFileSync(path.join(model.dir, "config.json"), "utf8")) as { vocab_size?: unknown }).vocab_size;
  } catch {
    return; // checkModelDir reports an unreadable model directory
  }
  if (typeof standardSize !== "number") return;
  try {
    defaultReasoningMap(standardSize, model.reasoning_vocab_size);
  } catch (error) {
    throw new ConfigError([{ path: "model.reasoning_vocab_size", source: "model", message: (error as Error).message }]);
  }
}
