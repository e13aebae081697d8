// Text of a completion with reasoning ids: every id is mapped to its source and the mapped
// sequence is decoded as one (byte-level pieces merge across a standard/reasoning boundary;
// a stock decoder would silently drop the unknown ids). Also says which tokens were
// reasoning tokens, which characters they produced (for highlighting), and where the block
// lay (for the per-step metrics).
import { ReasoningBlockTracker } from "./reasoning-mask.js";
import type { ReasoningVocabulary } from "./reasoning-vocabulary.js";

export interface TextDecoder {
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
}

/** Characters [start, end) of a text, counted in Unicode code points. */
export interface TextSpan {
  start: number;
  end: number;
}

export interface ReasoningTrace {
  /** The completion opened the block (its start marker appeared). */
  opened: boolean;
  /** It also closed it. */
  closed: boolean;
  /** Token positions [blockStart, blockEnd) strictly between the markers (0, 0 when not opened; blockEnd = length when not closed). */
  blockStart: number;
  blockEnd: number;
  /** Reasoning ids inside [blockStart, blockEnd), and elsewhere. */
  reasoningInside: number;
  reasoningOutside: number;
}

export interface DecodedCompletion {
  /** Text of the mapped ids. */
  text: string;
  /** Per token: true for a reasoning id. */
  reasoning: boolean[];
  /** Code-point spans of `text` produced by runs of reasoning tokens. */
  spans: TextSpan[];
  trace: ReasoningTrace;
}

/** Where the block lies in a completion and how many reasoning ids fell inside and outside it. */
export function reasoningTrace(ids: readonly number[], vocab: ReasoningVocabulary): ReasoningTrace {
  const tracker = new ReasoningBlockTracker(vocab);
  for (const id of ids) tracker.push(id);
  const opened = tracker.openedAt !== undefined;
  const blockStart = tracker.openedAt ?? 0;
  const blockEnd = opened ? (tracker.closedAt ?? ids.length) : 0;
  let inside = 0;
  let total = 0;
  ids.forEach((id, t) => {
    if (!vocab.isReasoning(id)) return;
    total++;
    if (t >= blockStart && t < blockEnd) inside++;
  });
  return {
    opened,
    closed: tracker.closedAt !== undefined,
    blockStart,
    blockEnd,
    reasoningInside: inside,
    reasoningOutside: total - inside,
  };
}

const codePoints = (text: string) => Array.from(text).length;

/**
 * Text offsets (code points) where each token's text ends, by incremental decoding over a
 * short window (as streaming detokenizers do): a token whose bytes do not yet form a whole
 * character ends where the character it completes ends.
 */
function tokenEnds(decoder: TextDecoder, mapped: readonly number[], options: { skipSpecialTokens?: boolean }, fullText: string): number[] {
  const ends: number[] = [];
  for (let t = 0; t < mapped.length; t++) {
    // Decoding the prefix is exact; a prefix ending inside a character ends in U+FFFD, which
    // then belongs to the token that completes it.
    const prefix = decoder.decode(mapped.slice(0, t + 1), options);
    const length = prefix.endsWith("\uFFFD") && !fullText.startsWith(prefix) ? codePoints(prefix) - 1 : codePoints(prefix);
    ends.push(Math.max(length, ends[t - 1] ?? 0));
  }
  return ends;
}

/** Decodes a completion: mapped text, per-token reasoning flags, the spans they produced, the block. */
export function decodeReasoningCompletion(
  decoder: TextDecoder,
  ids: readonly number[],
  vocab: ReasoningVocabulary,
  options: { skipSpecialTokens?: boolean } = {},
): DecodedCompletion {
  const mapped = ids.map((id) => vocab.source(id));
  const text = mapped.length === 0 ? "" : decoder.decode(mapped, options);
  const reasoning = ids.map((id) => vocab.isReasoning(id));
  const spans: TextSpan[] = [];
  if (reasoning.some(Boolean)) {
    const ends = tokenEnds(decoder, mapped, options, text);
    for (let t = 0; t < ids.length; t++) {
      if (!reasoning[t]) continue;
      const start = t === 0 ? 0 : ends[t - 1]!;
      const end = ends[t]!;
      if (end <= start) continue;
      const last = spans[spans.length - 1];
      if (last && last.end === start) last.end = end;
      else spans.push({ start, end });
    }
  }
  return { text, reasoning, spans, trace: reasoningTrace(ids, vocab) };
}
