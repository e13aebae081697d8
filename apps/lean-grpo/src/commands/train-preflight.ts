// Everything `lean-grpo train` can check before it starts a service, in one place and in the
// order a user would fix them: every key of every service section through that service's own
// schema (the PyTorch learner's keys among them), the algorithm by the learner's own rules,
// the run config, limits, dataset and held-out set as StartRun checks them (the orchestrator's
// checkRunOffline), a Lean REPL for Lean theorems, and every record's first prompt through the
// model's own tokenizer and chat template: encodable, and short enough that the prompt plus
// training.max_tokens fits the model's context. A refusal names the key and what to type, and
// the command exits 2 with nothing started.
import { readFileSync } from "node:fs";
import path from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { ConfigError, type ConfigIssue } from "@lean-grpo/kit";
import { tokenizeLocally, type InferenceConfig } from "@lean-grpo/inference";
import type { LearnerConfig } from "@lean-grpo/learner";
import type { RewardConfig } from "@lean-grpo/reward";
import type { VerifierConfig } from "@lean-grpo/verifier";
import { parseModelConfig } from "@lean-grpo/lm";
import { ModelTokenizer } from "@lean-grpo/lm/tokenizer";
import {
  checkRunOffline,
  firstPrompts,
  isLeanTheorem,
  localDatasetPlace,
  withAsyncCorrection,
  type OfflineRun,
  type RunConfigMessage,
} from "@lean-grpo/orchestrator";
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { meshOrchestratorConfig, resolveMeshServices, type MeshOptions, type MeshService } from "../mesh/start-mesh.js";
import { checkAlgorithmSection } from "../config/seed-algorithm-config.js";
import type { TrainFile } from "./train-file.js";
import { checkModelDir, checkReasoningSize } from "./train-config.js";

export interface TrainPreflight {
  file: TrainFile;
  runConfig: RunConfigMessage;
  mesh: MeshOptions;
  /** A resumed run: its saved config and dataset decide, so only the services are checked. */
  resume: boolean;
  /** The config groups' folder (named in a missing model's message). */
  configDir: string;
  /** False when the dataset file is missing (already reported): the checks that read it are skipped. */
  datasetFound?: boolean;
  /** TRL's max_prompt_length as given (seed-names.ts): no prompt may be longer. */
  maxPromptLength?: { value: number; name: string; source: string };
  env?: NodeJS.ProcessEnv;
}

/**
 * Every problem the checks find, each naming its key and what to type (empty: the run can start).
 * Checks that depend on another (the prompts on the model directory and the dataset) run only
 * when it passed, so one cause is reported once.
 */
export async function preflightTrain(plan: TrainPreflight): Promise<ConfigIssue[]> {
  const env = plan.env ?? process.env;
  const { file } = plan;
  const issues: ConfigIssue[] = [];
  const orchestrator = collectIssues(issues, () => meshOrchestratorConfig(plan.mesh));
  // A service section its schema refuses: reported, and the checks that need the services skipped.
  const resolved = orchestrator && collectIssues(issues, () => resolveMeshServices(plan.mesh, orchestrator));
  const services = new Map((resolved ?? []).map((s) => [s.entry.name, s]));
  const local = (name: string) => {
    const service = services.get(name);
    return service && "config" in service ? service : undefined;
  };
  const usesModel = local("inference") || local("learner");
  collectIssues(issues, () => local("learner") && !plan.resume && checkRunAlgorithm(file));
  const modelFound =
    collectIssues(issues, () => {
      if (usesModel) checkModelDir(file.model.dir, plan.configDir);
      return true;
    }) === true;
  collectIssues(issues, () => usesModel && checkReasoningSize(file.model));
  if (plan.resume || plan.datasetFound === false || !orchestrator) return issues;

  let run: OfflineRun;
  try {
    run = await checkRunOffline({
      runConfig: plan.runConfig,
      dataset: plan.file.dataset.path,
      place: localDatasetPlace(),
      maxDatasetBytes: orchestrator.max_dataset_bytes,
      limits: orchestrator.run_limits,
      // The mesh wires the orchestrator to every service it starts.
      services: { ...orchestrator.services, verifier: orchestrator.services.verifier ?? "the embedded verifier" },
    });
  } catch (error) {
    // The orchestrator's refusal as the command's: its message without the RPC code.
    if (error instanceof ConnectError) return [...issues, { path: "", source: "run config", message: error.rawMessage }];
    throw error;
  }
  if (!resolved) return issues;
  collectIssues(issues, () => checkLeanRepl(run, plan.file, services, env));
  if (modelFound) issues.push(...(await checkPrompts(run, local("inference"), local("learner"), plan.maxPromptLength)));
  return issues;
}

/** Runs `check`; a ConfigError's issues are added to `issues` (another error is thrown). Returns what it returned. */
export function collectIssues<T>(issues: ConfigIssue[], check: () => T): T | undefined {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
    return undefined;
  }
}

/** The run's algorithm section as the learner will check it at its first step (seed-algorithm-config.ts). */
function checkRunAlgorithm(file: TrainFile): void {
  const sections = file as Record<string, unknown>;
  const algorithm = (sections.algorithm ?? {}) as { name?: string; config?: Record<string, unknown> };
  const training = (sections.training ?? {}) as { async?: boolean };
  // What the orchestrator sends: an async run adds the rollout correction unless the config chose one.
  const sent = withAsyncCorrection(training.async === true, algorithm.config ?? {});
  checkAlgorithmSection(algorithm.name ?? "grpo", algorithm.config ?? {}, sent);
}

/**
 * Lean theorems are checked by the verifier's Lean REPL. Where that verifier is the one started
 * here (and the reward service that calls it too, for whole-proof and repair runs), it must have
 * a REPL: `repl.command`, else LEAN_REPL_CMD (services/verifier/src/repl/repl-command.ts), or
 * every proof would be answered UNAVAILABLE.
 */
function checkLeanRepl(run: OfflineRun, file: TrainFile, services: Map<string, MeshService>, env: NodeJS.ProcessEnv): void {
  const found = firstLean(run.theorems, "dataset", file.dataset.path) ?? firstLean(run.heldout, "held-out set", run.config.eval.data);
  if (!found) return;
  const verifier = services.get("verifier");
  if (!verifier || !("config" in verifier)) return; // a remote verifier has its own REPL
  const reward = services.get("reward");
  const rewardVerifierUrl = reward && "config" in reward ? (reward.config as unknown as RewardConfig).verifier.url : undefined;
  // Whole-proof and repair runs (and every held-out evaluation) have proofs checked by the reward service's verifier.
  const usesLocalVerifier =
    run.config.training.mode === "tactic" || (reward !== undefined && "config" in reward && rewardVerifierUrl === undefined);
  if (!usesLocalVerifier) return;
  const { command } = (verifier.config as unknown as VerifierConfig).repl;
  const configured = typeof command === "string" ? command.trim() !== "" : command.length > 0;
  if (configured || (env.LEAN_REPL_CMD ?? "").trim() !== "") return;
  throw new ConfigError([
    {
      path: "services.verifier.repl.command",
      source: "train config",
      message:
        `the ${found.set} ${found.file} holds Lean theorems (${found.where}), which only a Lean REPL can check, and no REPL is configured: ` +
        "set services.verifier.repl.command (e.g. services.verifier.repl.command='lake env /opt/repl/.lake/build/bin/repl' " +
        "services.verifier.repl.cwd=/opt/mathlib4; configs/train/lean-tactic.yaml has the whole section) or the LEAN_REPL_CMD environment " +
        "variable (with LEAN_REPL_CWD); check it first with lean-grpo verify PROOFS.jsonl --repl-cmd '...'. " +
        "A math dataset (problem/answer records) needs no REPL",
    },
  ]);
}

function firstLean(theorems: readonly Theorem[], set: string, file: string): { set: string; file: string; where: string } | undefined {
  const index = theorems.findIndex(isLeanTheorem);
  return index < 0 ? undefined : { set, file, where: `record ${index + 1}, id ${JSON.stringify(theorems[index]!.id)}` };
}

/**
 * Every record's first prompt through the tokenizer of the model that will sample it (the
 * embedded sampler's) or train on it (the learner's): refused when the vocabulary cannot encode
 * it, or when with training.max_tokens it overruns the model's context (max_position_embeddings),
 * which the sampler and the learner would refuse at the first step that meets it.
 */
async function checkPrompts(
  run: OfflineRun,
  inference: MeshService | undefined,
  learner: MeshService | undefined,
  maxPromptLength?: TrainPreflight["maxPromptLength"],
): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  const models = new Map<string, string>();
  if (inference && "config" in inference) {
    const config = inference.config as unknown as InferenceConfig;
    const proxiesVllm = config.backend === "vllm" || (config.backend === "auto" && config.vllm.url !== undefined);
    if (!proxiesVllm && config.embedded.model_dir) models.set(config.embedded.model_dir, "the embedded sampler");
  }
  const learnerDir = learner && "config" in learner ? (learner.config as unknown as LearnerConfig).model.dir : undefined;
  if (learnerDir && !models.has(learnerDir)) models.set(learnerDir, "the learner");
  for (const [dir, who] of models) {
    const tokenizer = await loadTokenizer(dir);
    if (typeof tokenizer === "string") {
      issues.push(issue("model.dir", tokenizer));
      continue;
    }
    const { format } = run.config.prompt;
    if (format === "chat" && !tokenizer.hasChatTemplate) {
      issues.push(
        issue("prompt.format", `prompt.format is "chat" but the tokenizer of ${dir} has no chat template; accepted here: auto, text`),
      );
      continue;
    }
    const chat = format === "chat" || (format === "auto" && tokenizer.hasChatTemplate);
    const context = contextOf(dir);
    let longest: { tokens: number; where: string } | undefined;
    const refused: string[] = [];
    for (const { set, theorem, prompt } of firstPrompts(run, chat)) {
      let tokens: number;
      try {
        tokens = tokenizeLocally(tokenizer, prompt).ids.length;
      } catch (error) {
        refused.push(
          `${set} ${JSON.stringify(theorem.id)}: ${error instanceof ConnectError ? error.rawMessage : (error as Error).message}`,
        );
        continue;
      }
      if (!longest || tokens > longest.tokens) longest = { tokens, where: `${set} ${JSON.stringify(theorem.id)}` };
    }
    if (refused.length > 0) {
      issues.push(
        issue(
          "model.dir",
          `the tokenizer of ${dir} (${who}'s model) cannot encode ${refused.length} prompt${refused.length > 1 ? "s" : ""} (${refused.slice(0, 3).join("; ")}${refused.length > 3 ? "; ..." : ""}); ` +
            "use a model whose tokenizer covers these characters (model.dir), or a dataset (and prompt.* templates) it can read",
        ),
      );
    }
    if (longest && maxPromptLength && longest.tokens > maxPromptLength.value) {
      issues.push(
        issue(
          maxPromptLength.name,
          `${maxPromptLength.name} (${maxPromptLength.source}) is ${maxPromptLength.value}, but the longest prompt, ${longest.where}, is ${longest.tokens} tokens ` +
            `with ${dir}'s tokenizer; prompts are never cut here (a cut problem is another problem): set it to at least ${longest.tokens}, or leave it out`,
        ),
      );
    }
    const maxTokens = run.config.training.max_tokens;
    if (longest && context !== undefined && longest.tokens + maxTokens > context) {
      issues.push(
        issue(
          "training.max_tokens",
          `prompt plus max_tokens is ${longest.tokens + maxTokens} tokens (the longest prompt, ${longest.where}, is ${longest.tokens}; ` +
            `training.max_tokens is ${maxTokens}); the context of ${dir} (${who}'s model, max_position_embeddings) is ${context}: ` +
            (context > longest.tokens
              ? `set training.max_tokens to at most ${context - longest.tokens} (the seeds' max_new_tokens, max_completion_length)`
              : "its prompts alone fill it") +
            ", or use a model with a longer context (model.dir)",
        ),
      );
    }
  }
  return issues;
}

/** The tokenizer of a model directory, or why it cannot be loaded. */
async function loadTokenizer(dir: string): Promise<ModelTokenizer | string> {
  try {
    return await ModelTokenizer.load(dir);
  } catch (error) {
    return `the tokenizer of ${dir} cannot be loaded: ${(error as Error).message}`;
  }
}

/** max_position_embeddings of a model directory's config.json; undefined when it cannot be read (the model's own load says why). */
function contextOf(dir: string): number | undefined {
  try {
    return parseModelConfig(JSON.parse(readFileSync(path.join(dir, "config.json"), "utf8"))).maxPositionEmbeddings;
  } catch {
    return undefined;
  }
}

function issue(key: string, message: string): ConfigIssue {
  return { path: key, source: "train config", message };
}
