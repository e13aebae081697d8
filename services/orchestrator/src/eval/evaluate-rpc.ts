// OrchestratorService.Evaluate: held-out evaluation of a run's adapter, an adapter or
// checkpoint directory, or the base model: a run's held-out evaluation (run/training/heldout-eval.ts
// heldoutOptions) with the request's k values, sampling and length. The adapter is loaded into the inference service
// under a name of this call's own and unloaded after; each problem's result is streamed as
// it is scored, then the summary.
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { FinishReason, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import {
  type EvaluateRequest,
  type EvaluateResponse,
  EvaluateResponseSchema,
  type EvaluationAnswerForms,
  EvaluationAnswerFormsSchema,
  type EvaluatedCompletion,
  EvaluatedCompletionSchema,
} from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { OrchestratorConfig } from "../config.js";
import { DatasetError } from "../data/dataset-error.js";
import { loadDataset, validateInlineTheorems, type DatasetFiles } from "../data/load-dataset.js";
import { datasetFiles } from "../data/dataset-files.js";
import { HELDOUT_CONCURRENCY } from "../run/training/heldout-context.js";
import { heldoutOptions } from "../run/training/heldout-eval.js";
import { connectMesh, type MeshClients } from "../run/mesh-clients.js";
import { usesChatPrompts } from "../run/rollout/prompts.js";
import { promptKeysSet, withModelPrompt } from "../run/config/model-prompt.js";
import { runConfigInput } from "../run/config/run-config-message.js";
import type { AnswerFormStats } from "./answer-form.js";
import type { CompletionVerdict } from "./completion-verdict.js";
import { evaluate } from "./evaluate.js";
import { checkPassAtKs } from "./pass-at-k.js";
import { EventQueue } from "./event-queue.js";
import { evaluationTarget, type EvaluatedAdapter } from "./evaluation-target.js";

export async function* evaluateRpc(
  config: OrchestratorConfig,
  request: EvaluateRequest,
  signal: AbortSignal,
): AsyncGenerator<EvaluateResponse> {
  const started = performance.now();
  const { ks, samples } = requestedKs(request);
  const temperature = request.temperature ?? 1;
  if (!Number.isFinite(temperature) || temperature < 0)
    throw new ConnectError(`temperature must be a finite number ≥ 0, got ${temperature}`, Code.InvalidArgument);
  if (request.topP !== undefined && !(request.topP > 0 && request.topP <= 1))
    throw new ConnectError(`top_p must be in (0, 1], got ${request.topP}`, Code.InvalidArgument);
  const files = datasetFiles(config);
  let theorems = await heldoutProblems(request, files);
  if (request.maxProblems > 0) theorems = theorems.slice(0, request.maxProblems);
  const { adapter: evaluated, shown, runConfig } = await evaluationTarget(request, config.runs_dir, files.root);

  // Every problem in flight listens for the call's end.
  setMaxListeners(HELDOUT_CONCURRENCY * 4, signal);
  const clients = connectMesh(config);
  let adapter = "";
  try {
    if (evaluated) adapter = await loadAdapter(clients, evaluated, signal);
    // Without a run, the prompt keys the request leaves unset are the served model's own.
    if (!request.runId)
      runConfig.prompt = await withModelPrompt(
        runConfig.prompt,
        promptKeysSet(runConfigInput({ runConfig: request.runConfig, config: undefined }), []),
        clients,
        signal,
      );
    const events = new EventQueue<EvaluateResponse>();
    const chatPrompts = await usesChatPrompts(runConfig.prompt.format, clients);
    const evaluation = evaluate({
      // The run's held-out evaluation, with the request's k, sampling and length.
      ...heldoutOptions({ clients, config: runConfig, theorems, chatPrompts, signal }, adapter),
      ks,
      samples,
      temperature,
      ...(request.topP !== undefined ? { topP: request.topP } : {}),
      ...(request.topK ? { topK: request.topK } : {}),
      keepCompletions: request.includeCompletions,
      maxTokens: request.maxTokens || runConfig.training.max_tokens,
      seed: Number(request.seed),
      onProblem: (result, index) =>
        events.push(
          create(EvaluateResponseSchema, {
            event: {
              case: "problem",
              value: {
                index,
                theoremId: result.id,
                samples: result.samples,
                solved: result.solved,
                completions: (result.completions ?? []).map(evaluatedCompletion),
              },
            },
          }),
        ),
    }).finally(() => events.end());
    // Awaited below; marked handled now so that a stream the client left early leaves no unhandled rejection.
    evaluation.catch(() => {});
    yield* events.drain();
    const report = await evaluation;
    yield create(EvaluateResponseSchema, {
      event: {
        case: "summary",
        value: {
          evaluated: shown ?? evaluated?.dir ?? "base model",
          problems: report.problems,
          k: report.k,
          samples: report.samples,
          greedy: report.greedy,
          passAt1: report.pass_at_1,
          passAtK: report.pass_at_k,
          passAt: report.pass_at,
          seconds: (performance.now() - started) / 1000,
          ...(report.forms ? { answerForms: answerForms(report.forms) } : {}),
        },
      },
    });
  } finally {
    if (adapter) await clients.adapters.unloadEverywhere(adapter);
    clients.close();
  }
}

/** Completions per problem: what the reward service scores in one group by default (max_group_size). */
const MAX_SAMPLES = 1024;
/** k values of one request. */
const MAX_KS = 64;

/**
 * The k values and samples per problem a request asks for: `ks` (else `k`, else 1), and
 * `samples` (else the largest k); a k above samples is INVALID_ARGUMENT naming both.
 */
function requestedKs(request: EvaluateRequest): { ks: number[]; samples: number } {
  const asked = request.ks.length > 0 ? request.ks : [request.k || 1];
  if (asked.some((k) => k < 1)) throw new ConnectError(`ks must be positive integers, got [${asked.join(", ")}]`, Code.InvalidArgument);
  if (asked.length > MAX_KS) throw new ConnectError(`ks has ${asked.length} values; at most ${MAX_KS}`, Code.InvalidArgument);
  const samples = request.samples || Math.max(...asked);
  if (samples > MAX_SAMPLES)
    throw new ConnectError(
      `samples is ${samples}; accepted: 1..${MAX_SAMPLES} per problem (one ScoreGroup call checks them all)`,
      Code.InvalidArgument,
    );
  const field = request.ks.length > 0 ? "ks" : "k";
  for (const k of asked) {
    if (k > samples)
      throw new ConnectError(
        `${field}: ${k} is larger than samples (${samples}); pass@k needs at least k completions per problem: raise samples to ${k} or more`,
        Code.InvalidArgument,
      );
  }
  return { ks: checkPassAtKs(asked, samples), samples };
}

async function heldoutProblems(request: EvaluateRequest, files: DatasetFiles): Promise<Theorem[]> {
  if ((request.datasetPath === "") === (request.theorems.length === 0))
    throw new ConnectError("set exactly one of dataset_path and theorems", Code.InvalidArgument);
  try {
    if (request.datasetPath) return await loadDataset(files, request.datasetPath, "dataset_path");
    validateInlineTheorems(request.theorems);
    return [...request.theorems];
  } catch (error) {
    if (error instanceof DatasetError) throw new ConnectError(error.message, Code.InvalidArgument);
    throw error;
  }
}

/**
 * Sends the adapter directory's files to every inference replica under a name of this call's
 * own; returns the name. Sent as bytes, not as a path: the inference service reads paths
 * only under its own adapters.dir, and need not share this filesystem.
 */
async function loadAdapter(clients: MeshClients, { dir, files }: EvaluatedAdapter, signal: AbortSignal): Promise<string> {
  const name = `eval-${randomUUID().slice(0, 8)}-${path.basename(dir)}`;
  await clients.withRetry("inference", () => clients.adapters.loadFiles(name, 1, files, signal), signal);
  return name;
}

function evaluatedCompletion(verdict: CompletionVerdict): EvaluatedCompletion {
  return create(EvaluatedCompletionSchema, {
    text: verdict.text,
    tokens: verdict.tokens,
    finishReason: FINISH_REASONS[verdict.finish_reason],
    solved: verdict.solved,
    reward: verdict.reward,
    verdict: verdict.verdict ? Verdict[verdict.verdict as keyof typeof Verdict] : Verdict.UNSPECIFIED,
    reason: verdict.reason ?? "",
    firstError: verdict.first_error ?? "",
    mathCheck: verdict.math_check ?? "",
  });
}

const FINISH_REASONS: Record<CompletionVerdict["finish_reason"], FinishReason> = {
  stop: FinishReason.STOP,
  length: FinishReason.LENGTH,
  abort: FinishReason.ABORT,
  unspecified: FinishReason.UNSPECIFIED,
};

function answerForms(stats: AnswerFormStats): EvaluationAnswerForms {
  const optional = (value: number | null) => value ?? undefined;
  return create(EvaluationAnswerFormsSchema, {
    completions: stats.completions,
    rightNumber: stats.right_number,
    boxed: stats.boxed,
    workedShare: stats.worked_share,
    accuracyWorked: optional(stats.accuracy_worked),
    accuracyDirect: optional(stats.accuracy_direct),
    rightNumberWorked: optional(stats.right_number_worked),
    rightNumberDirect: optional(stats.right_number_direct),
    completionTokens: stats.completion_tokens,
    truncated: stats.truncated,
  });
}
