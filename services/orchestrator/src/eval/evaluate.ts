// Held-out evaluation over the mesh: for each problem, Generate n completions with an
// adapter (greedy when n = 1), ScoreGroup them, count the solved ones, and report the
// mean of the unbiased pass@1 and pass@k estimates over the problems; for math problems,
// how the completions answered too (answer-form.ts: right number, worked out or direct,
// accuracy per form, length).
import { FinishReason, TaskKind, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { MeshClients } from "../run/mesh-clients.js";
import { buildPrompt } from "../run/rollout/prompts.js";
import type { RunConfig } from "../run/config/run-config.js";
import { type AnswerFormStats, answerFormStats, type FormCounts, formCounts } from "./answer-form.js";
import { passAtK } from "./pass-at-k.js";

export interface EvalOptions {
  clients: Pick<MeshClients, "inference" | "reward" | "withRetry">;
  theorems: readonly Theorem[];
  /** The k of pass@k. */
  k: number;
  /** Completions per problem (n ≥ k); 1 samples greedily. */
  samples: number;
  temperature: number;
  maxTokens: number;
  /** The reasoning mask to sample under (the run's model.reasoning_mask); unset: the service's own. */
  reasoningMask?: ReasoningMask;
  /** Loaded adapter name; "" for the base model. */
  adapter: string;
  prompt: RunConfig["prompt"];
  chatPrompts: boolean;
  seed: number;
  /** Problems in flight at once. */
  concurrency: number;
  signal?: AbortSignal;
  /** Called as each problem is scored (in the order they finish), with its index in `theorems`. */
  onProblem?: (result: ProblemResult, index: number) => void;
}

export interface ProblemResult {
  id: string;
  samples: number;
  solved: number;
  /** The answer forms of its completions; absent for Lean theorems. */
  forms?: FormCounts;
}

export interface EvalReport {
  problems: number;
  k: number;
  samples: number;
  greedy: boolean;
  pass_at_1: number;
  pass_at_k: number;
  /** How the math completions answered; absent when no problem is a math problem. */
  forms?: AnswerFormStats;
  results: ProblemResult[];
}

export async function evaluate(options: EvalOptions): Promise<EvalReport> {
  const { k, samples } = options;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`--k must be a positive integer, got ${k}`);
  if (!Number.isInteger(samples) || samples < k) throw new RangeError(`--samples must be an integer ≥ k (${k}), got ${samples}`);
  const greedy = samples === 1;
  const results: ProblemResult[] = new Array(options.theorems.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < options.theorems.length; index = next++) {
      results[index] = await evaluateProblem(options, options.theorems[index]!, index, greedy);
      options.onProblem?.(results[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, options.theorems.length)) }, worker));
  const mean = (f: (r: ProblemResult) => number) => results.reduce((a, r) => a + f(r), 0) / Math.max(1, results.length);
  const forms = answerFormStats(results.flatMap((r) => (r.forms ? [r.forms] : [])));
  return {
    problems: results.length,
    k,
    samples,
    greedy,
    pass_at_1: mean((r) => passAtK(r.samples, r.solved, 1)),
    pass_at_k: mean((r) => passAtK(r.samples, r.solved, k)),
    ...(forms ? { forms } : {}),
    results,
  };
}

async function evaluateProblem(options: EvalOptions, theorem: Theorem, index: number, greedy: boolean): Promise<ProblemResult> {
  const { clients, signal } = options;
  const generated = await clients.withRetry(
    "inference",
    () =>
      clients.inference.generate(
        {
          prompt: buildPrompt(theorem, options.prompt, options.chatPrompts),
          n: options.samples,
          adapter: options.adapter,
          requestId: `eval/${index}`,
          sampling: {
            maxTokens: options.maxTokens,
            temperature: greedy ? 0 : options.temperature,
            ...(options.reasoningMask !== undefined ? { reasoningMask: options.reasoningMask } : {}),
            seed: BigInt((options.seed * 1_000_003 + index) >>> 0),
          },
        },
        { signal },
      ),
    signal,
  );
  const scored = await clients.withRetry(
    "reward",
    () => clients.reward.scoreGroup({ theorem, completions: generated.completions, groupId: `eval-${index}` }, { signal }),
    signal,
  );
  const result: ProblemResult = {
    id: theorem.id,
    samples: generated.completions.length,
    solved: scored.results.filter((r) => r.solved).length,
  };
  if (isMathProblem(theorem)) {
    const samples = generated.completions.map((completion, i) => ({
      text: completion.text,
      tokens: completion.tokenIds.length,
      truncated: completion.finishReason === FinishReason.LENGTH,
      solved: scored.results[i]?.solved ?? false,
    }));
    result.forms = formCounts(samples, theorem.informalStatement, theorem.answer);
  }
  return result;
}

/** As the prompts decide it (run/rollout/prompts.ts): a math task, or no Lean statement but an answer. */
function isMathProblem(theorem: Theorem): boolean {
  return theorem.kind === TaskKind.MATH_ANSWER || (!theorem.statement && theorem.answer !== "");
}
