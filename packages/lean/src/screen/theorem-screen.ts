// The one screen every entry point that takes a theorem runs before anything of it
// reaches Lean: the verifier (Verify, VerifyBatch, StartProof), the reward service
// (Score, ScoreGroup) and the orchestrator (StartRun, Evaluate; datasets and inline
// theorems). The header is an allow-list of its own (header-screen.ts). The context
// must lex as Lean, hold only the commands on its list (context-commands.ts) and no
// banned construct; the statement must lex as Lean, be one declaration head
// (statement-head.ts) and hold no banned construct. The proof, which only the verifier
// receives, is screened there with the same constructs (source-screen.ts).
//
// The token table decides what a token is. The services that never see Lean, and the
// verifier before a worker takes the request, screen with PRESUMED_TABLE (the fallback
// list read as Mathlib reads it); the verifier screens again on the worker's lease with
// the table Lean reported for the header (or the strict fallback where Lean could not
// report one), and only what passes that is sent to Lean.
import { blankComments, blankCommentTokens } from "../blank.js";
import { PRESUMED_TABLE } from "../builtin-tokens.js";
import { codeTokens, declaredTheoremName, statementWithoutProof } from "../declarations.js";
import { screenTheoremHeader, type TheoremHeaderFields } from "../header-screen.js";
import { commandStartedBy } from "../commands.js";
import { crlfToLf } from "../line-ends.js";
import type { TokenTable } from "../token-table.js";
import { tokenize } from "../tokenize.js";
import type { LeanToken } from "../tokens.js";
import { hiddenReadings, type HiddenReading } from "./banned-constructs.js";
import { contextCommandRefusal } from "./context-commands.js";
import { disagreement, readDeclaringAtoms, type AtomReadings } from "./declared-atoms.js";
import { bannedRefusal, lexicalRefusal, placeIn, type Refusal } from "./source-screen.js";
import { statementHeadRefusal } from "./statement-head.js";

export interface TheoremSourceFields {
  context: string;
  statement: string;
}

export type TheoremField = "header" | "imports" | "context" | "statement";

export type TheoremScreen<F extends TheoremField = TheoremField> = { ok: true } | { ok: false; field: F; reason: string };

/** Longest context or statement screened, characters (a dataset's are a few hundred; the screen's time grows with it). */
export const MAX_THEOREM_TEXT_CHARS = 64 * 1024;

/**
 * Screens a theorem's context and statement, read with `table` (the header's token
 * table where known; PRESUMED_TABLE by default). An empty field (a math task has no statement)
 * passes; whether a statement is required is the caller's to say.
 */
export function screenTheoremSource(
  theorem: TheoremSourceFields,
  table: TokenTable = PRESUMED_TABLE,
): TheoremScreen<"context" | "statement"> {
  for (const field of ["statement", "context"] as const) {
    const length = theorem[field].length;
    if (length > MAX_THEOREM_TEXT_CHARS) {
      return { ok: false, field, reason: `is ${length} characters long; at most ${MAX_THEOREM_TEXT_CHARS} are accepted` };
    }
  }
  const statement = crlfToLf(theorem.statement);
  const context = crlfToLf(theorem.context);
  // The context first read for the atoms it declares: the statement after it is read with them (and without).
  const readings = context.trim() === "" ? undefined : readDeclaringAtoms(context, table, "context");
  const tables = readings === undefined ? [table] : tablesAfter(readings, table);
  const name = statement.trim() === "" ? "" : (declaredTheoremName(statementCode(statement, table)) ?? "");
  const inStatement = statement.trim() === "" ? undefined : screenStatement(statement, name, tables);
  if (inStatement) return { ok: false, field: "statement", reason: inStatement.reason };
  const inContext = readings === undefined ? undefined : screenContext(context, name, table, readings);
  if (inContext) return { ok: false, field: "context", reason: inContext.reason };
  return { ok: true };
}

/**
 * The tables the parts after `context` (the statement, the proof, a tactic) are read
 * with: the header's `table` plus the atoms the context declares, and `table` alone
 * (Lean holds a declared atom only where its declaration elaborated; declared-atoms.ts).
 * Just `[table]` when the context declares none.
 */
export function tablesAfterContext(context: string, table: TokenTable = PRESUMED_TABLE): TokenTable[] {
  const text = crlfToLf(context);
  return text.trim() === "" ? [table] : tablesAfter(readDeclaringAtoms(text, table, "context"), table);
}

function tablesAfter(readings: AtomReadings, table: TokenTable): TokenTable[] {
  return readings.after === table ? [table] : [readings.after, table];
}

/** Screens everything of a theorem that reaches Lean: the header (or imports), the context and the statement. */
export function screenTheorem(theorem: TheoremHeaderFields & TheoremSourceFields, table: TokenTable = PRESUMED_TABLE): TheoremScreen {
  const header = screenTheoremHeader(theorem);
  return header.ok ? screenTheoremSource(theorem, table) : header;
}

/** The statement as the verifier sends it: comments blanked, a trailing placeholder proof dropped (a prefix, positions kept). */
function statementCode(statement: string, table: TokenTable): string {
  return statementWithoutProof(blankComments(statement, { tokens: table }));
}

/** The statement read with each of `tables` (with and without the context's atoms): every check on each reading. */
function screenStatement(statement: string, theoremName: string, tables: readonly TokenTable[]): Refusal | undefined {
  const lexed = tables.map((table) => tokenize(statement, { tokens: table }));
  for (const [k, table] of tables.entries()) {
    const lexical = lexicalRefusal(statement, table, "statement", lexed[k]);
    if (lexical) return lexical;
  }
  for (const [k, table] of tables.entries()) {
    const differs = k > 0 && disagreement(statement, lexed[0]!, lexed[k]!, "statement", "the context's notation declares");
    if (differs) return differs;
    const code = statementCode(statement, table);
    const tokens = codeTokens(code, { tokens: table });
    const refusal = earliest(
      bannedRefusal(code, "statement", theoremName, table, "statement", tokens),
      statementHeadRefusal(tokens, code, table),
      ...inHiddenReadings(code, tokens, table, (reading) => commandRefusal(code, reading, table)),
    );
    if (refusal) return refusal;
  }
  return undefined;
}

/** The context in both its readings (with its declared atoms, and without): every check on each. */
function screenContext(context: string, theoremName: string, table: TokenTable, readings: AtomReadings): Refusal | undefined {
  const both = [
    { lexed: readings.declared, table: readings.after },
    ...(readings.plain === readings.declared ? [] : [{ lexed: readings.plain, table }]),
  ];
  for (const { lexed } of both) {
    const lexical = lexicalRefusal(context, table, "context", lexed);
    if (lexical) return lexical;
  }
  for (const [k, { lexed, table: read }] of both.entries()) {
    // The reading with the atoms first (what Lean reads when the notation elaborates), then whether the other agrees.
    if (k === 1 && readings.refusal) return readings.refusal;
    // Comments blanked: what Lean is sent.
    const code = blankCommentTokens(context, lexed.tokens);
    const tokens = lexed.tokens.filter(isCode);
    const refusal = earliest(
      bannedRefusal(code, "context", theoremName, read, "context", tokens),
      contextCommandRefusal(tokens, code, read),
      ...inHiddenReadings(code, tokens, read, (reading) =>
        contextCommandRefusal(reading.tokens.filter(isCode), code, read, reading.offset),
      ),
    );
    if (refusal) return refusal;
  }
  return readings.refusal;
}

/**
 * `check` over each reading Lean could make at a `{` inside a plain string (banned
 * constructs there are the part screen's; the commands are this screen's), its reason
 * saying where the code hides.
 */
function inHiddenReadings(
  code: string,
  tokens: readonly LeanToken[],
  table: TokenTable,
  check: (reading: HiddenReading) => Refusal | undefined,
): (Refusal | undefined)[] {
  return hiddenReadings(code, tokens, table).readings.map((reading) => {
    const refusal = check(reading);
    return (
      refusal && {
        ...refusal,
        reason: `${refusal.reason} (inside a string, where Lean may read it as code: as an interpolation, or after a parse error there)`,
      }
    );
  });
}

/** A token of a statement's hidden reading that begins a command: a statement holds none. */
function commandRefusal(code: string, reading: HiddenReading, table: TokenTable): Refusal | undefined {
  for (const token of reading.tokens.filter(isCode)) {
    const command = commandStartedBy(token, table);
    if (command === undefined) continue;
    const index = token.start + reading.offset;
    return { index, reason: `\`${command}\` at ${placeIn(code, index, "statement")} begins another command` };
  }
  return undefined;
}

const isCode = (token: LeanToken) => token.kind !== "lineComment" && token.kind !== "blockComment" && token.kind !== "docComment";

/** The refusal that stands first in the text; a banned construct before a shape refusal at the same place (it says more). */
function earliest(...refusals: (Refusal | undefined)[]): Refusal | undefined {
  return refusals.reduce<Refusal | undefined>((first, next) => (next && (!first || next.index < first.index) ? next : first), undefined);
}
