// What the service checks: the Lean source sent on top of the header's environment,
// and the answer of a screen (the value, or why it was refused and whose field to blame).
import { codeTokens } from "@lean-grpo/lean";
import { endPosition, type SourcePosition } from "./source-position.js";
import type { TheoremTarget } from "./theorem-target.js";

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
  /**
   * Where the statement's signature (binders and type) starts, after its declared name; it
   * ends at `proofStart`. Lean reports some of the proof's failures (termination, say) at the
   * declaration's keyword or name, so those are not the signature's.
   */
  signatureStart: SourcePosition;
  /**
   * Whether the model's text comes before the statement (a whole-file proof's auxiliary
   * declarations): then how the statement elaborates can be the model's doing.
   */
  statementFollowsModelText: boolean;
}

/** `field` names the request field to blame when the theorem, not the proof, is refused ("theorem.context"). */
export type Screened<T> = { ok: true; value: T } | { ok: false; reason: string; field?: string };

/**
 * The dataset's spans in a checked source: `context` (with its newline) opens the text,
 * `beforeStatement` is everything up to the statement (the context, then a whole file's
 * auxiliary declarations, if any).
 */
export function theoremSpans(context: string, beforeStatement: string, target: Pick<TheoremTarget, "statement" | "name">): TheoremSpans {
  // The declared name as the lexer reads it (a name's letters can occur in the keyword before it).
  const signature = codeTokens(target.statement).find((token) => token.text === target.name)?.end ?? 0;
  return {
    contextEnd: endPosition(context),
    signatureStart: endPosition(beforeStatement + target.statement.slice(0, signature)),
    statementFollowsModelText: beforeStatement !== context,
  };
}
