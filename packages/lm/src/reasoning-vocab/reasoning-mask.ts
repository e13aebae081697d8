// The reasoning mask: which ids may come next, as a function of the completion's ids alone
// (docs/concepts/reasoning-vocabulary.md, "The block and the mask"). The block state is
// advanced on source ids (a marker written with reasoning copies counts), by matching the
// markers' id sequences: no text is decoded, so it costs O(marker length) per token.
import type { ReasoningMaskMode } from "./reasoning-settings.js";
import type { ReasoningVocabulary } from "./reasoning-vocabulary.js";

/** before: no start marker yet; inside: after the start marker, until the end marker completes; after: for good. */
export type BlockState = "before" | "inside" | "after";

/** Follows one completion's block state token by token. */
export class ReasoningBlockTracker {
  private stateNow: BlockState = "before";
  /** The last source ids, enough to match the longer marker. */
  private readonly recent: number[] = [];
  /** Tokens since the block opened (the end marker must lie wholly after the start marker). */
  private insideCount = 0;
  /** Completion position of the first token inside the block, and of the end marker's first token. */
  openedAt: number | undefined;
  closedAt: number | undefined;
  private position = 0;

  constructor(private readonly vocab: ReasoningVocabulary) {}

  /** The state that decides the mask of the next token. */
  get state(): BlockState {
    return this.stateNow;
  }

  push(id: number): BlockState {
    const { startIds, endIds } = this.vocab.markers;
    this.recent.push(this.vocab.source(id));
    if (this.recent.length > Math.max(startIds.length, endIds.length)) this.recent.shift();
    this.position++;
    if (this.stateNow === "before" && endsWith(this.recent, startIds)) {
      this.stateNow = "inside";
      this.openedAt = this.position;
      this.insideCount = 0;
    } else if (this.stateNow === "inside") {
      this.insideCount++;
      if (this.insideCount >= endIds.length && endsWith(this.recent, endIds)) {
        this.stateNow = "after";
        this.closedAt = this.position - endIds.length;
      }
    }
    return this.stateNow;
  }
}

function endsWith(values: readonly number[], suffix: readonly number[]): boolean {
  if (suffix.length > values.length) return false;
  const offset = values.length - suffix.length;
  for (let i = 0; i < suffix.length; i++) if (values[offset + i] !== suffix[i]) return false;
  return true;
}

/** The block state in which each completion token was sampled (state before token t, for every t). */
export function blockStates(completionIds: readonly number[], vocab: ReasoningVocabulary): BlockState[] {
  const tracker = new ReasoningBlockTracker(vocab);
  return completionIds.map((id) => {
    const state = tracker.state;
    tracker.push(id);
    return state;
  });
}

/** Whether `id` may be sampled in `state` under `mode`. */
export function isAllowed(id: number, state: BlockState, mode: ReasoningMaskMode, vocab: ReasoningVocabulary): boolean {
  if (mode === "free") return true;
  const reasoning = id >= vocab.standardSize;
  if (state !== "inside") return !reasoning;
  if (mode === "gated") return true;
  return reasoning || vocab.markers.endIds.includes(id);
}

/** True when `mode` restricts anything in `state` (free never does). */
export function restricts(state: BlockState, mode: ReasoningMaskMode): boolean {
  return mode === "strict" || (mode === "gated" && state !== "inside");
}

/**
 * Sets disallowed entries of one row of logits (length n_s + n_r) to −∞, in place: the mask
 * comes before temperature, top-k and top-p.
 */
export function maskLogitsRow(
  logits: Float32Array | Float64Array,
  state: BlockState,
  mode: ReasoningMaskMode,
  vocab: ReasoningVocabulary,
): void {
  if (!restricts(state, mode)) return;
  const n = vocab.standardSize;
  if (state !== "inside") {
    logits.fill(Number.NEGATIVE_INFINITY, n);
    return;
  }
  // strict, inside: reasoning ids and the end marker's ids.
  const keep = vocab.markers.endIds.map((id) => logits[id]!);
  logits.fill(Number.NEGATIVE_INFINITY, 0, n);
  vocab.markers.endIds.forEach((id, k) => {
    logits[id] = keep[k]!;
  });
}
