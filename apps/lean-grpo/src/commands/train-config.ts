// The config of `lean-grpo train`, composed as the seeds' Hydra configs are:
//   --config FILE < groups (model=..., dataset=..., algorithm=...) < LEANGRPO_* env < flags < dotted overrides.
// Groups live in the config directory: --config-dir, else LEANGRPO_CONFIG_DIR, else ./configs
// when it has groups, else the configs/ folder of this repository.
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, listGroups, loadConfig, splitGroupChoices } from "@lean-grpo/kit";
import { RunConfigShapeError, runConfigToMessage, type RunConfigMessage } from "@lean-grpo/orchestrator";
import type { TrainFile, TrainFileSchema } from "./train-command.js";

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
  });
}

/**
 * The train file's run sections as StartRun's typed run_config: the file without the CLI's
 * own keys (model, runs_dir, services, dataset.path). Keys the message has no place for
 * are a ConfigError naming them; values are the orchestrator's to check (StartRun).
 */
export function trainRunConfig(file: TrainFile): RunConfigMessage {
  const { model, runs_dir: _runsDir, services: _services, dataset, ...run } = file;
  const { path: _path, ...datasetRun } = dataset;
  try {
    // Of `model:`, the run carries the mask (sent with every Generate and TrainStep); the rest configures the services.
    return runConfigToMessage({ ...run, dataset: datasetRun, model: { reasoning_mask: model.reasoning_mask } });
  } catch (error) {
    if (error instanceof RunConfigShapeError) throw new ConfigError([{ path: error.path, source: "train config", message: error.message }]);
    throw error;
  }
}

/**
 * The model directory must be there before any service starts: a Hugging Face directory with
 * a config.json. The error names the value, what is accepted and the choices at hand.
 */
export function checkModelDir(dir: string, root: string): void {
  if (existsSync(path.join(dir, "config.json"))) return;
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
        (models.length > 0 ? ` (here: ${models.map((m) => `models/${m}`).join(", ")})` : "") +
        (groups.length > 0 ? ` or choose model=NAME (${groups.join(", ")})` : ""),
    },
  ]);
}
