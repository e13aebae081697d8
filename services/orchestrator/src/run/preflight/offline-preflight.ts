// The checks of StartRun that need no service: the run config as StartRun parses it, the
// run limits, the training and held-out sets read and validated as StartRun reads them (whole,
// or a streamed set's sample: data/training-set.ts), and what training.mode needs of them;
// and the first prompt of each record checked as the run will send it.
// A client that starts the mesh itself (`lean-grpo train`) runs them before any service
// starts, so a bad run is refused with nothing started; StartRun runs them again itself.
import { Code, ConnectError } from "@connectrpc/connect";
import { DatasetError } from "../../data/dataset-error.js";
import { TaskKind, type Prompt, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { OrchestratorConfig } from "../../config.js";
import { AUTO_OPTIONS, datasetOptionsOf } from "../../data/dataset-options.js";
import type { DatasetPlace } from "../../data/dataset-place.js";
import { openDataset, readWholeDataset } from "../../data/load-dataset.js";
import { openTrainingSet } from "../../data/training-set.js";
import { resolveRunConfig } from "../config/parse-run-config.js";
import type { RunConfig } from "../config/run-config.js";
import type { RunConfigMessage } from "../config/run-config-message.js";
import { checkRunLimits, type RunLimits } from "../config/run-limits.js";
import { buildPrompt } from "../rollout/prompts.js";
import { buildTacticPrompt } from "../rollout/tactic-prompt.js";
import { checkRunMode } from "./run-mode-check.js";

export interface OfflineRun {
  config: RunConfig;
  /** The records validated before the run starts: all it trains on (max_train_samples applied), or a streamed set's sample. */
  theorems: Theorem[];
  /** How many records the run draws from. */
  trainSize: number;
  /** The held-out problems it evaluates (eval.max_problems applied). */
  heldout: Theorem[];
}

export interface OfflineInputs {
  runConfig: RunConfigMessage;
  /** The training set's path, as StartRun's dataset_path. */
  dataset: string;
  /** Where dataset files are read (the caller's data root, or the local file system). */
  place: DatasetPlace;
  /** The orchestrator's max_dataset_bytes: a set up to it is validated whole, a larger one streamed. */
  maxDatasetBytes: number;
  limits: RunLimits;
  services: OrchestratorConfig["services"];
}

/** Throws what StartRun would answer: INVALID_ARGUMENT (or FAILED_PRECONDITION) naming the key or the record. */
export async function checkRunOffline(inputs: OfflineInputs): Promise<OfflineRun> {
  const config = resolveRunConfig(inputs.runConfig);
  checkRunLimits(config, inputs.limits);
  const refusal = (error: unknown, field: string, file: string) =>
    error instanceof DatasetError
      ? new ConnectError(error.message, Code.InvalidArgument)
      : new ConnectError(`${field} "${file}" cannot be read: ${(error as Error).message}`, Code.InvalidArgument);
  let train;
  try {
    train = await openTrainingSet(inputs.place, inputs.dataset, datasetOptionsOf(config.dataset), {
      maxBytes: inputs.maxDatasetBytes,
      maxTrainSamples: config.dataset.max_train_samples,
    });
  } catch (error) {
    throw refusal(error, "dataset_path", inputs.dataset);
  }
  const theorems = [...train.checked];
  const trainSize = train.size;
  await train.close();
  let heldout: Theorem[] = [];
  if (config.eval.data) {
    try {
      const opened = await openDataset(inputs.place, config.eval.data, { ...AUTO_OPTIONS, header: config.dataset.header });
      try {
        heldout = await readWholeDataset(opened, inputs.maxDatasetBytes, "eval.data");
      } finally {
        await opened.close();
      }
    } catch (error) {
      throw refusal(error, "eval.data", config.eval.data);
    }
  }
  if (config.eval.max_problems > 0) heldout = heldout.slice(0, config.eval.max_problems);
  checkRunMode(config, theorems, inputs.services);
  return { config, theorems, trainSize, heldout };
}

/** Whether a record is a Lean theorem (checked by a Lean REPL) rather than a math answer. */
export function isLeanTheorem(theorem: Theorem): boolean {
  return theorem.kind !== TaskKind.MATH_ANSWER && theorem.statement.trim() !== "";
}

export interface FirstPrompt {
  /** "dataset" or "held-out set". */
  set: string;
  theorem: Theorem;
  prompt: Prompt;
}

/**
 * The first prompt of every record, as the run sends it: the whole-proof (or repair's first)
 * prompt, and in tactic mode the first turn's with no goals yet (the REPL gives them). Held-out
 * problems are always whole-proof prompts.
 */
export function firstPrompts(run: OfflineRun, chat: boolean): FirstPrompt[] {
  const { prompt, training } = run.config;
  const train = (theorem: Theorem) =>
    training.mode === "tactic" ? buildTacticPrompt(theorem, prompt, chat, [], []) : buildPrompt(theorem, prompt, chat);
  return [
    ...run.theorems.map((theorem) => ({ set: "dataset", theorem, prompt: train(theorem) })),
    ...run.heldout.map((theorem) => ({ set: "held-out set", theorem, prompt: buildPrompt(theorem, prompt, chat) })),
  ];
}
