// The Lean source the service checks: the dataset's context and statement, then
// ` := ` and the model's proof body. Every part is screened for banned constructs
// before anything reaches Lean; a part that fails makes the verdict REJECTED.
import { BUILTIN_TABLE, blankComments, codeTokens, crlfToLf, tokensResynchronised, type TokenTable } from "@lean-grpo/lean";
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
export function prepareProof(target: TheoremTarget, written: string, table: TokenTable = BUILTIN_TABLE): Screened<CheckedSource> {
  // Lean reads CRLF as LF: so does the screen, and Lean is sent what the screen read.
  const proof = crlfToLf(written);
  const stripped = blankComments(proof, { tokens: table });
  const refused = screenTheorem(target, table) ?? unterminatedComment(proof, table) ?? screenPart(stripped, "proof", target.name, table);
  if (refused) return { ok: false, reason: refused };
  // "A leading := is accepted": the body is what follows it.
  const first = codeTokens(stripped, { tokens: table })[0];
  const body = (first?.text === ":=" ? stripped.slice(first.end) : stripped).trim();
  if (body === "") return { ok: false, reason: "the proof is empty (after removing comments)" };
  return { ok: true, value: joinToStatement(target, body) };
}

/** The statement closed by `by sorry`, for tactic mode; `sorryAt` is where the REPL reports that sorry. */
export function prepareProofStart(
  target: TheoremTarget,
  table: TokenTable = BUILTIN_TABLE,
): Screened<CheckedSource & { sorryAt: SourcePosition }> {
  const refused = screenTheorem(target, table);
  if (refused) return { ok: false, reason: refused };
  const source = joinToStatement(target, "by sorry");
  const sorryAt = endPosition(source.text.slice(0, -"sorry".length));
  return { ok: true, value: { ...source, sorryAt } };
}

/** Screens one tactic of tactic mode like a proof body. */
export function prepareTactic(written: string, theoremName: string, table: TokenTable = BUILTIN_TABLE): Screened<string> {
  const tactic = crlfToLf(written);
  const stripped = blankComments(tactic, { tokens: table });
  const refused = unterminatedComment(tactic, table, "tactic") ?? screenPart(stripped, "proof", theoremName, table, "tactic");
  if (refused) return { ok: false, reason: refused };
  if (stripped.trim() === "") return { ok: false, reason: "the tactic is empty (after removing comments)" };
  return { ok: true, value: stripped.trim() };
}

/**
 * A comment that never closes: Lean refuses the text ("unterminated comment"), so the screen does too, rather
 * than blank the rest of the text and send Lean what precedes it.
 */
function unterminatedComment(text: string, table: TokenTable, label = "proof"): string | undefined {
  const comment = tokensResynchronised(text, { tokens: table }).find((token) => token.unterminated);
  if (!comment) return undefined;
  const at = positionAt(text, comment.start);
  return `the ${label} does not lex as Lean: unterminated comment at ${label} ${at.line}:${at.column}`;
}

function screenTheorem(target: TheoremTarget, table: TokenTable): string | undefined {
  return screenPart(target.statement, "statement", target.name, table) ?? screenPart(target.context, "context", target.name, table);
}

function screenPart(text: string, part: SourcePart, theoremName: string, table: TokenTable, label: string = part): string | undefined {
  // The model's text must lex: after a lexical error Lean re-reads it from the next character, not token by token.
  const lexical = part === "proof" ? findLexicalError(text, table) : undefined;
  if (lexical) {
    const at = positionAt(text, lexical.index);
    return `the ${label} does not lex as Lean: ${lexical.message} at ${label} ${at.line}:${at.column}`;
  }
  const use = findBannedUse(text, part, theoremName, table);
  if (!use) return undefined;
  const at = positionAt(text, use.index);
  const shown = use.text.trim() === use.construct.name ? `\`${use.construct.name}\`` : `${use.construct.name} (\`${use.text.trim()}\`)`;
  const where = use.hiddenInString
    ? " (inside a string, where Lean may read it as code: as an interpolation, or after a parse error there)"
    : "";
  return `banned ${shown} at ${label} ${at.line}:${at.column}${where}: it ${use.construct.why}`;
}

function joinToStatement(target: TheoremTarget, body: string): CheckedSource {
  const head = `${target.context === "" ? "" : `${target.context}\n`}${target.statement} := `;
  return { text: head + body, proofStart: endPosition(head) };
}
