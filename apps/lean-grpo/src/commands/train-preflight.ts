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
import { ConfigError } from "@lean-grpo/kit";
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
  env?: NodeJS.ProcessEnv;
}

/** Throws the first refusal (a ConfigError or an Error naming the key); returns when the run can start. */
export async function preflightTrain(plan: TrainPreflight): Promise<void> {
  const env = plan.env ?? process.env;
  const { file } = plan;
  const orchestrator = meshOrchestratorConfig(plan.mesh);
  const services = new Map(resolveMeshServices(plan.mesh, orchestrator).map((s) => [s.entry.name, s]));
  const local = (name: string) => {
    const service = services.get(name);
    return service && "config" in service ? service : undefined;
  };
  // Independent of each other: every one that fails is reported at once.
  allOf([
    () => local("learner") && !plan.resume && checkRunAlgorithm(file),
    () => (local("inference") || local("learner")) && checkModelDir(file.model.dir, plan.configDir),
    () => (local("inference") || local("learner")) && checkReasoningSize(file.model),
  ]);
  if (plan.resume) return;

  const run = await orchestratorCheckAsync(() =>
    checkRunOffline({
      runConfig: plan.runConfig,
      dataset: plan.file.dataset.path,
      place: localDatasetPlace(),
      maxDatasetBytes: orchestrator.max_dataset_bytes,
      limits: orchestrator.run_limits,
      // The mesh wires the orchestrator to every service it starts.
      services: { ...orchestrator.services, verifier: orchestrator.services.verifier ?? "the embedded verifier" },
    }),
  );
  checkLeanRepl(run, plan.file, services, env);
  await checkPrompts(run, local("inference"), local("learner"));
}

/** Runs every check; throws one ConfigError holding the issues of all that failed (another error as it is). */
function allOf(checks: readonly (() => unknown)[]): void {
  const issues: ConfigError["issues"] = [];
  for (const check of checks) {
    try {
      check();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...error.issues);
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
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

/** The orchestrator's refusal as the command's: its message without the RPC code. */
async function orchestratorCheckAsync<T>(check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof ConnectError) throw new Error(error.rawMessage);
    throw error;
  }
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
async function checkPrompts(run: OfflineRun, inference: MeshService | undefined, learner: MeshService | undefined): Promise<void> {
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
    const { format } = run.config.prompt;
    if (format === "chat" && !tokenizer.hasChatTemplate)
      throw configError(
        "prompt.format",
        `prompt.format is "chat" but the tokenizer of ${dir} has no chat template; accepted here: auto, text`,
      );
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
      throw configError(
        "model.dir",
        `the tokenizer of ${dir} (${who}'s model) cannot encode ${refused.length} prompt${refused.length > 1 ? "s" : ""} (${refused.slice(0, 3).join("; ")}${refused.length > 3 ? "; ..." : ""}); ` +
          "use a model whose tokenizer covers these characters (model.dir), or a dataset (and prompt.* templates) it can read",
      );
    }
    const maxTokens = run.config.training.max_tokens;
    if (longest && context !== undefined && longest.tokens + maxTokens > context) {
      throw configError(
        "training.max_tokens",
        `prompt plus max_tokens is ${longest.tokens + maxTokens} tokens (the longest prompt, ${longest.where}, is ${longest.tokens}; ` +
          `training.max_tokens is ${maxTokens}); the context of ${dir} (${who}'s model, max_position_embeddings) is ${context}: ` +
          (context > longest.tokens
            ? `set training.max_tokens to at most ${context - longest.tokens} (the seeds' max_new_tokens, max_completion_length)`
            : "its prompts alone fill it") +
          ", or use a model with a longer context (model.dir)",
      );
    }
  }
}

async function loadTokenizer(dir: string): Promise<ModelTokenizer> {
  try {
    return await ModelTokenizer.load(dir);
  } catch (error) {
    throw configError("model.dir", `the tokenizer of ${dir} cannot be loaded: ${(error as Error).message}`);
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

function configError(key: string, message: string): ConfigError {
  return new ConfigError([{ path: key, source: "train config", message }]);
}
