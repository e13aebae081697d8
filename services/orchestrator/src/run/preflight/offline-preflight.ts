// The checks of StartRun that need no service: the run config as StartRun parses it, the
// run limits, the training and held-out sets read and validated whole, and what
// training.mode needs of them; and the first prompt of each record as the run will send it.
// A client that starts the mesh itself (`lean-grpo train`) runs them before any service
// starts, so a bad run is refused with nothing started; StartRun runs them again itself.
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskKind, type Prompt, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { OrchestratorConfig } from "../../config.js";
import { parseDataset } from "../../data/load-dataset.js";
import { resolveRunConfig } from "../config/parse-run-config.js";
import type { RunConfig } from "../config/run-config.js";
import type { RunConfigMessage } from "../config/run-config-message.js";
import { checkRunLimits, type RunLimits } from "../config/run-limits.js";
import { buildPrompt } from "../rollout/prompts.js";
import { buildTacticPrompt } from "../rollout/tactic-prompt.js";
import { checkRunMode } from "./run-mode-check.js";

export interface OfflineRun {
  config: RunConfig;
  /** The records the run trains on (max_train_samples applied). */
  theorems: Theorem[];
  /** The held-out problems it evaluates (eval.max_problems applied). */
  heldout: Theorem[];
}

export interface OfflineInputs {
  runConfig: RunConfigMessage;
  /** The training set's path, as StartRun's dataset_path. */
  dataset: string;
  /** Reads a dataset file (the caller's data root). */
  readText: (file: string) => string;
  limits: RunLimits;
  services: OrchestratorConfig["services"];
}

/** Throws what StartRun would answer: INVALID_ARGUMENT (or FAILED_PRECONDITION) naming the key or the record. */
export function checkRunOffline(inputs: OfflineInputs): OfflineRun {
  const config = resolveRunConfig(inputs.runConfig);
  checkRunLimits(config, inputs.limits);
  const read = (file: string, field: string) => {
    let text: string;
    try {
      text = inputs.readText(file);
    } catch (error) {
      throw new ConnectError(`${field} "${file}" cannot be read: ${(error as Error).message}`, Code.InvalidArgument);
    }
    try {
      return parseDataset(text, file);
    } catch (error) {
      throw new ConnectError((error as Error).message, Code.InvalidArgument);
    }
  };
  let theorems = read(inputs.dataset, "dataset_path");
  if (config.dataset.max_train_samples !== null) theorems = theorems.slice(0, config.dataset.max_train_samples);
  let heldout = config.eval.data ? read(config.eval.data, "eval.data") : [];
  if (config.eval.max_problems > 0) heldout = heldout.slice(0, config.eval.max_problems);
  checkRunMode(config, theorems, inputs.services);
  return { config, theorems, heldout };
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
