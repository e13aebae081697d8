// length: DAPO's soft overlong punishment (arXiv 2503.14476, eq. 13): 0 up to
// max_tokens − cache_tokens, then linear down to −1 at max_tokens, −1 beyond;
// a completion the sampler cut off (finish_reason LENGTH) gets `truncated`.
import { Code, ConnectError } from "@connectrpc/connect";
import { FinishReason, TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { enumParam, integerParam, numberParam } from "../reward/params.js";
import { defineScorer } from "../reward/scorer.js";

/** The default soft zone as a share of the maximum (DAPO: 1024 of 4096). */
const CACHE_SHARE = 1024 / 4096;

export const lengthScorer = defineScorer({
  name: "length",
  description:
    "Both tasks. DAPO overlong penalty: 0 while the length is at most max_tokens - cache_tokens, then " +
    "((max_tokens - cache_tokens) - length) / cache_tokens down to -1 at max_tokens, -1 beyond. A completion with " +
    "finish_reason LENGTH (cut off by the sampler) gets `truncated` whatever its length.",
  tasks: [TaskKind.LEAN_PROOF, TaskKind.MATH_ANSWER],
  groupLevel: false,
  params: {
    max_tokens: integerParam({
      default: 4096,
      min: 1,
      description:
        "L_max: at and beyond it the penalty is -1. Unset: the request's generation budget (RewardSpec.max_completion_tokens) " +
        "when given, else 4096; set, at most that budget.",
    }),
    cache_tokens: integerParam({
      default: 1024,
      min: 0,
      description: "L_cache: the length of the soft zone before max_tokens; at most max_tokens. Unset: a quarter of max_tokens.",
    }),
    truncated: numberParam({
      default: -1,
      min: -1,
      max: 0,
      description: "Value of a completion the sampler truncated (finish_reason LENGTH).",
    }),
    unit: enumParam({
      values: ["tokens", "characters"],
      default: "tokens",
      description: "tokens: len(completion.token_ids) (required); characters: code points of completion.text.",
    }),
  },
  check: (p) =>
    p.cache_tokens <= p.max_tokens ? undefined : `cache_tokens (${p.cache_tokens}) must be at most max_tokens (${p.max_tokens})`,
  derive(p, chosen, budget) {
    // A sampler that stops at `budget` tokens never produces a longer completion: a larger
    // L_max would never apply the penalty.
    if (budget !== undefined && chosen.has("max_tokens") && p.max_tokens > budget)
      return `max_tokens (${p.max_tokens}) exceeds the generation budget (${budget}): no completion can reach it, so the overlong penalty would never apply; leave it unset (it follows the budget) or set at most ${budget}`;
    const maxTokens = chosen.has("max_tokens") || budget === undefined ? p.max_tokens : budget;
    // The default soft zone is the same share of L_max as DAPO's 1024 of 4096.
    const cacheTokens = chosen.has("cache_tokens") ? p.cache_tokens : Math.floor(maxTokens * CACHE_SHARE);
    if (cacheTokens > maxTokens && budget !== undefined && !chosen.has("max_tokens"))
      return `cache_tokens (${cacheTokens}) is larger than max_tokens (${maxTokens}, the generation budget): the soft zone must fit in the completion's length; set at most ${maxTokens}`;
    return { ...p, max_tokens: maxTokens, cache_tokens: cacheTokens };
  },
  bounds: () => ({ solved: [-1, 0], unsolved: [-1, 0] }),
  score(evidence, p) {
    const completion = evidence.completion;
    if (completion.finishReason === FinishReason.LENGTH)
      return { value: p.truncated, detail: "truncated by the sampler (finish_reason LENGTH)" };
    let length: number;
    if (p.unit === "tokens") {
      if (completion.tokenIds.length === 0) {
        throw new ConnectError(
          `${evidence.field}.token_ids is empty but the length scorer counts tokens (length.unit "tokens"); ` +
            `send the sampled token ids, or set unit to "characters"`,
          Code.InvalidArgument,
        );
      }
      length = completion.tokenIds.length;
    } else {
      length = [...completion.text].length;
    }
    return {
      value: overlongPenalty(length, p.max_tokens, p.cache_tokens),
      detail: `${length} ${p.unit} (soft limit ${p.max_tokens - p.cache_tokens}, hard ${p.max_tokens})`,
    };
  },
});

export function overlongPenalty(length: number, maxLength: number, cache: number): number {
  const softLimit = maxLength - cache;
  if (length <= softLimit) return 0;
  if (length <= maxLength) return (softLimit - length) / cache;
  return -1;
}
