// What the service checks: the Lean source sent on top of the header's environment,
// and the answer of a screen (the value, or why it was refused and whose field to blame).
import type { SourcePosition } from "./source-position.js";

export interface CheckedSource {
  /** Exactly what Lean elaborates on top of the header's environment. */
  text: string;
  /** Where the proof body starts in `text`: tactics before it belong to the context. */
  proofStart: SourcePosition;
  /** Where the dataset's own text lies in `text`, so that an error there is blamed on the theorem (theorem-error.ts). */
  theorem: TheoremSpans;
}

export interface TheoremSpans {
  /** The dataset's context is `text` up to here. */
  contextEnd: SourcePosition;
  /** Where the dataset's statement starts; it ends at `proofStart`. */
  statementStart: SourcePosition;
  /**
   * Whether the model's text comes before the statement (a whole-file proof's auxiliary
   * declarations): then how the statement elaborates can be the model's doing.
   */
  statementFollowsModelText: boolean;
}

/** `field` names the request field to blame when the theorem, not the proof, is refused ("theorem.context"). */
export type Screened<T> = { ok: true; value: T } | { ok: false; reason: string; field?: string };
