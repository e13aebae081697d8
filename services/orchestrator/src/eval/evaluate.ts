// Held-out evaluation over the mesh: for each problem, Generate n completions with an
// adapter (greedy when n = 1; several Generate calls when n is above the inference
// service's max_n), ScoreGroup them, count the solved ones, and report the mean of the
// unbiased pass@k estimate over the problems for every k asked, all from the same n
// samples; for math problems, how the completions answered too (answer-form.ts: right
// number, worked out or direct, accuracy per form, length). Each completion's verdict can
// be kept (completion-verdict.ts) for people to read.
import { type Completion, FinishReason, TaskKind, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import type { MeshClients } from "../run/mesh-clients.js";
import { buildPrompt } from "../run/rollout/prompts.js";
import type { RunConfig } from "../run/config/run-config.js";
import { type AnswerFormStats, answerFormStats, type FormCounts, formCounts } from "./answer-form.js";
import { type CompletionVerdict, completionVerdict } from "./completion-verdict.js";
import { generateLimit, sampleChunks } from "./sample-chunks.js";
import { checkPassAtKs, passAtK } from "./pass-at-k.js";

export interface EvalOptions {
  clients: Pick<MeshClients, "inference" | "reward" | "withRetry">;
  theorems: readonly Theorem[];
  /** The k of pass@k: one or several, each estimated from the same `samples` completions. */
  ks: readonly number[];
  /** Completions per problem (n ≥ every k); 1 samples greedily. */
  samples: number;
  temperature: number;
  /** Nucleus sampling (when samples > 1); unset: 1. */
  topP?: number;
  /** Top-k sampling (when samples > 1); unset or 0: all tokens. */
  topK?: number;
  /** Keep every completion with its verdict in the results (ProblemResult.completions). */
  keepCompletions?: boolean;
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
  /** Its completions and their verdicts, in sampling order; only with keepCompletions. */
  completions?: CompletionVerdict[];
}

/** The mean unbiased pass@k over the problems for one k. */
export interface PassAtKValue {
  k: number;
  value: number;
}

export interface EvalReport {
  problems: number;
  /** The largest k asked. */
  k: number;
  samples: number;
  greedy: boolean;
  pass_at_1: number;
  /** pass@k for the largest k asked. */
  pass_at_k: number;
  /** pass@k for every k asked, ascending. */
  pass_at: PassAtKValue[];
  /** How the math completions answered; absent when no problem is a math problem. */
  forms?: AnswerFormStats;
  results: ProblemResult[];
}

export async function evaluate(options: EvalOptions): Promise<EvalReport> {
  const { samples } = options;
  const ks = checkPassAtKs(options.ks, samples);
  const greedy = samples === 1;
  // Only a sampled evaluation can ask for more than one Generate holds; the greedy one never asks.
  const maxN = greedy ? 1 : await generateLimit(options.clients, options.signal);
  const results: ProblemResult[] = new Array(options.theorems.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < options.theorems.length; index = next++) {
      results[index] = await evaluateProblem(options, options.theorems[index]!, index, greedy, maxN);
      options.onProblem?.(results[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, options.theorems.length)) }, worker));
  const mean = (f: (r: ProblemResult) => number) => results.reduce((a, r) => a + f(r), 0) / Math.max(1, results.length);
  const forms = answerFormStats(results.flatMap((r) => (r.forms ? [r.forms] : [])));
  const passAt = ks.map((k) => ({ k, value: mean((r) => passAtK(r.samples, r.solved, k)) }));
  return {
    problems: results.length,
    k: ks.at(-1)!,
    samples,
    greedy,
    pass_at_1: mean((r) => passAtK(r.samples, r.solved, 1)),
    pass_at_k: passAt.at(-1)!.value,
    pass_at: passAt,
    ...(forms ? { forms } : {}),
    results,
  };
}

async function evaluateProblem(
  options: EvalOptions,
  theorem: Theorem,
  index: number,
  greedy: boolean,
  maxN: number,
): Promise<ProblemResult> {
  const { clients, signal } = options;
  const prompt = buildPrompt(theorem, options.prompt, options.chatPrompts);
  const completions: Completion[] = [];
  for (const chunk of sampleChunks(options.samples, maxN)) {
    const generated = await clients.withRetry(
      "inference",
      () =>
        clients.inference.generate(
          {
            prompt,
            n: chunk.n,
            adapter: options.adapter,
            requestId: chunk.index === 0 ? `eval/${index}` : `eval/${index}/${chunk.index}`,
            sampling: {
              maxTokens: options.maxTokens,
              temperature: greedy ? 0 : options.temperature,
              ...(!greedy && options.topP !== undefined ? { topP: options.topP } : {}),
              ...(!greedy && options.topK ? { topK: options.topK } : {}),
              ...(options.reasoningMask !== undefined ? { reasoningMask: options.reasoningMask } : {}),
              seed: BigInt(chunk.seed((options.seed * 1_000_003 + index) >>> 0)),
            },
          },
          { signal },
        ),
      signal,
    );
    completions.push(...generated.completions);
  }
  const scored = await clients.withRetry(
    "reward",
    () => clients.reward.scoreGroup({ theorem, completions, groupId: `eval-${index}` }, { signal }),
    signal,
  );
  const verdicts: (RewardResult | undefined)[] = completions.map((_, i) => scored.results[i]);
  const result: ProblemResult = {
    id: theorem.id,
    samples: completions.length,
    solved: verdicts.filter((r) => r?.solved).length,
  };
  if (isMathProblem(theorem)) {
    const samples = completions.map((completion, i) => ({
      text: completion.text,
      tokens: completion.tokenIds.length,
      truncated: completion.finishReason === FinishReason.LENGTH,
      solved: verdicts[i]?.solved ?? false,
    }));
    result.forms = formCounts(samples, theorem.informalStatement, theorem.answer);
  }
  if (options.keepCompletions) result.completions = completions.map((completion, i) => completionVerdict(completion, verdicts[i]));
  return result;
}

/** As the prompts decide it (run/rollout/prompts.ts): a math task, or no Lean statement but an answer. */
function isMathProblem(theorem: Theorem): boolean {
  return theorem.kind === TaskKind.MATH_ANSWER || (!theorem.statement && theorem.answer !== "");
}
