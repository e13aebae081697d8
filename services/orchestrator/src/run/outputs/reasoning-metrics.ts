// Per-step metrics of a reasoning vocabulary (docs/concepts/reasoning-vocabulary.md), from the
// block traces the inference service returns with each completion (Completion.reasoning):
// how much of the thinking uses the reasoning ids, how much of the rest does, how long the
// block is, and how many completions open and close it. Absent when no completion has a trace.
import type { Completion } from "@lean-grpo/gen/leangrpo/v1/common_pb";

export const REASONING_METRICS = [
  "reasoning_share",
  "reasoning_share_inside",
  "reasoning_share_outside",
  "reasoning_block_tokens",
  "reasoning_block_opened",
  "reasoning_block_closed",
] as const;

export function reasoningStepMetrics(completions: readonly Completion[]): Record<string, number> {
  const traced = completions.filter((c) => c.reasoning !== undefined);
  if (traced.length === 0) return {};
  let tokens = 0;
  let inside = 0;
  let insideReasoning = 0;
  let outsideReasoning = 0;
  let opened = 0;
  let closed = 0;
  for (const c of traced) {
    const r = c.reasoning!;
    tokens += c.tokenIds.length;
    insideReasoning += r.reasoningInside;
    outsideReasoning += r.reasoningOutside;
    if (r.opened) {
      opened++;
      inside += r.blockEnd - r.blockStart;
    }
    if (r.closed) closed++;
  }
  const outside = tokens - inside;
  return {
    /** Reasoning ids among all completion tokens. */
    reasoning_share: (insideReasoning + outsideReasoning) / Math.max(1, tokens),
    /** Reasoning ids among the tokens between the markers. */
    reasoning_share_inside: insideReasoning / Math.max(1, inside),
    /** Reasoning ids among the other tokens (markers, before and after the block). */
    reasoning_share_outside: outsideReasoning / Math.max(1, outside),
    /** Mean tokens between the markers, over the completions that opened the block. */
    reasoning_block_tokens: inside / Math.max(1, opened),
    /** Share of completions that wrote the start marker. */
    reasoning_block_opened: opened / traced.length,
    /** Share of completions that closed the block. */
    reasoning_block_closed: closed / traced.length,
  };
}
