// The Lean source the service checks: the dataset's context and statement, then
// ` := ` and the model's proof body. Every part passes the screen of @lean-grpo/lean
// before anything reaches Lean, read with the header's token table: a context or
// statement that fails it makes the request invalid (the dataset's fault), a proof
// that fails it makes the verdict REJECTED (the model's).
import {
  BUILTIN_TABLE,
  blankComments,
  codeTokens,
  crlfToLf,
  readsAsWholeFile,
  screenSourcePart,
  screenTheoremSource,
  tablesAfterContext,
  type TokenTable,
} from "@lean-grpo/lean";
import { theoremSpans, type CheckedSource, type Screened } from "./checked-source.js";
import { endPosition, type SourcePosition } from "./source-position.js";
import type { TheoremTarget } from "./theorem-target.js";
import { prepareWholeFile } from "./whole-file-source.js";

export type { CheckedSource, Screened } from "./checked-source.js";

/**
 * Screens the statement, the context and the proof, and joins them. A whole-file proof
 * (the theorem's proof format says so, or `auto` reads one) is taken apart first.
 */
export function prepareProof(target: TheoremTarget, written: string, table: TokenTable = BUILTIN_TABLE): Screened<CheckedSource> {
  const theorem = screenTarget(target, table);
  if (theorem) return theorem;
  if (readsAsWholeFile(written, target.proofFormat ?? "body", table)) return prepareWholeFile(target, written, table);
  // Lean reads CRLF as LF: so does the screen, and Lean is sent what the screen read.
  const proof = crlfToLf(written);
  // Read with the atoms the context's notation declares (and without them: Lean holds them only if it elaborated).
  const tables = tablesAfterContext(target.context, table);
  const refused = screenSourcePart(proof, "proof", target.name, tables);
  if (refused) return { ok: false, reason: refused.reason };
  const stripped = blankComments(proof, { tokens: tables[0] });
  // "A leading := is accepted": the body is what follows it.
  const first = codeTokens(stripped, { tokens: tables[0] })[0];
  const body = (first?.text === ":=" ? stripped.slice(first.end) : stripped).trim();
  if (body === "") return { ok: false, reason: "the proof is empty (after removing comments)" };
  return { ok: true, value: joinToStatement(target, body) };
}

/** The statement closed by `by sorry`, for tactic mode; `sorryAt` is where the REPL reports that sorry. */
export function prepareProofStart(
  target: TheoremTarget,
  table: TokenTable = BUILTIN_TABLE,
): Screened<CheckedSource & { sorryAt: SourcePosition }> {
  const theorem = screenTarget(target, table);
  if (theorem) return theorem;
  const source = joinToStatement(target, "by sorry");
  const sorryAt = endPosition(source.text.slice(0, -"sorry".length));
  return { ok: true, value: { ...source, sorryAt } };
}

/**
 * Screens one tactic of tactic mode like a proof body, read with `table` — or with the
 * tables after the session's context (tablesAfterContext), when it declares atoms.
 */
export function prepareTactic(
  written: string,
  theoremName: string,
  table: TokenTable | readonly TokenTable[] = BUILTIN_TABLE,
): Screened<string> {
  const tactic = crlfToLf(written);
  const refused = screenSourcePart(tactic, "proof", theoremName, table, "tactic");
  if (refused) return { ok: false, reason: refused.reason };
  const stripped = blankComments(tactic, { tokens: "source" in table ? table : table[0] });
  if (stripped.trim() === "") return { ok: false, reason: "the tactic is empty (after removing comments)" };
  return { ok: true, value: stripped.trim() };
}

/** The dataset's context and statement through the one theorem screen, on this table. */
function screenTarget(target: TheoremTarget, table: TokenTable): { ok: false; reason: string; field: string } | undefined {
  const screen = screenTheoremSource({ context: target.context, statement: target.statement }, table);
  return screen.ok ? undefined : { ok: false, field: `theorem.${screen.field}`, reason: screen.reason };
}

function joinToStatement(target: TheoremTarget, body: string): CheckedSource {
  const context = target.context === "" ? "" : `${target.context}\n`;
  const head = `${context}${target.statement} := `;
  return { text: head + body, proofStart: endPosition(head), theorem: theoremSpans(context, context, target) };
}
