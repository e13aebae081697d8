// The Lean source the service checks: the dataset's context and statement, then
// ` := ` and the model's proof body. Every part is screened for banned constructs
// before anything reaches Lean; a part that fails makes the verdict REJECTED.
import { blankComments } from "@lean-grpo/lean";
import { findBannedUse, findLexicalError, type SourcePart } from "./banned-constructs.js";
import { endPosition, positionAt, type SourcePosition } from "./source-position.js";
import type { TheoremTarget } from "./theorem-target.js";

export interface CheckedSource {
  /** Exactly what Lean elaborates on top of the header's environment. */
  text: string;
  /** Where the proof body starts in `text`: tactics before it belong to the context. */
  proofStart: SourcePosition;
}

export type Screened<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Screens the statement, the context and the proof, and joins them. */
export function prepareProof(target: TheoremTarget, proof: string): Screened<CheckedSource> {
  const stripped = blankComments(proof);
  const refused = screenTheorem(target) ?? screenPart(stripped, "proof", target.name);
  if (refused) return { ok: false, reason: refused };
  // "A leading := is accepted": the body is what follows it.
  const body = stripped.replace(/^\s*:=/u, "").trim();
  if (body === "") return { ok: false, reason: "the proof is empty (after removing comments)" };
  return { ok: true, value: joinToStatement(target, body) };
}

/** The statement closed by `by sorry`, for tactic mode; `sorryAt` is where the REPL reports that sorry. */
export function prepareProofStart(target: TheoremTarget): Screened<CheckedSource & { sorryAt: SourcePosition }> {
  const refused = screenTheorem(target);
  if (refused) return { ok: false, reason: refused };
  const source = joinToStatement(target, "by sorry");
  const sorryAt = endPosition(source.text.slice(0, -"sorry".length));
  return { ok: true, value: { ...source, sorryAt } };
}

/** Screens one tactic of tactic mode like a proof body. */
export function prepareTactic(tactic: string, theoremName: string): Screened<string> {
  const stripped = blankComments(tactic);
  const refused = screenPart(stripped, "proof", theoremName, "tactic");
  if (refused) return { ok: false, reason: refused };
  if (stripped.trim() === "") return { ok: false, reason: "the tactic is empty (after removing comments)" };
  return { ok: true, value: stripped.trim() };
}

function screenTheorem(target: TheoremTarget): string | undefined {
  return screenPart(target.statement, "statement", target.name) ?? screenPart(target.context, "context", target.name);
}

function screenPart(text: string, part: SourcePart, theoremName: string, label: string = part): string | undefined {
  // The model's text must lex: after a lexical error Lean re-reads it from the next character, not token by token.
  const lexical = part === "proof" ? findLexicalError(text) : undefined;
  if (lexical) {
    const at = positionAt(text, lexical.index);
    return `the ${label} does not lex as Lean: ${lexical.message} at ${label} ${at.line}:${at.column}`;
  }
  const use = findBannedUse(text, part, theoremName);
  if (!use) return undefined;
  const at = positionAt(text, use.index);
  const shown = use.text.trim() === use.construct.name ? `\`${use.construct.name}\`` : `${use.construct.name} (\`${use.text.trim()}\`)`;
  return `banned ${shown} at ${label} ${at.line}:${at.column}: it ${use.construct.why}`;
}

function joinToStatement(target: TheoremTarget, body: string): CheckedSource {
  const head = `${target.context === "" ? "" : `${target.context}\n`}${target.statement} := `;
  return { text: head + body, proofStart: endPosition(head) };
}
