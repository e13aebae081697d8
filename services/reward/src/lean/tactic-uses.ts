// The names a proof really relies on: identifiers in its code (Lean's tokens, from
// @lean-grpo/lean) that are not under a combinator that hides failure. `try ring`
// succeeds whether or not ring did anything, so it shows nothing.
import { codeTokens, type LeanToken } from "@lean-grpo/lean";

/** Combinators after which a tactic may fail or do nothing while the proof still checks. */
const FAILURE_HIDING = new Set(["try", "repeat", "repeat'", "iterate", "first", "any_goals", "fail_if_success", "success_if_fail"]);

/**
 * Identifiers used outside failure-hiding scopes. A combinator's scope is the
 * rest of its line and the lines indented deeper than it; a line with `<|>`
 * (either side may have failed) counts for nothing.
 */
export function reliedOnIdentifiers(code: string): Set<string> {
  const names = new Set<string>();
  let guardColumn: number | undefined;
  for (const line of tokenLines(code)) {
    const indent = line.column;
    if (guardColumn !== undefined && indent > guardColumn) continue;
    guardColumn = undefined;
    if (line.tokens.some((t) => t.kind === "symbol" && t.text === "<|>")) {
      guardColumn = indent;
      continue;
    }
    const guard = line.tokens.findIndex((t) => t.kind === "identifier" && !t.escaped && FAILURE_HIDING.has(t.text));
    const counted = guard >= 0 ? line.tokens.slice(0, guard) : line.tokens;
    if (guard >= 0) guardColumn = line.tokens[guard]!.start - line.start;
    for (const token of counted) if (token.kind === "identifier") names.add(token.text);
  }
  return names;
}

interface TokenLine {
  /** Index of the line's first character in the code. */
  start: number;
  /** Column of its first token. */
  column: number;
  tokens: LeanToken[];
}

/** The code's tokens grouped by the line each begins on (lines with no token are skipped). */
function tokenLines(code: string): TokenLine[] {
  const lines: TokenLine[] = [];
  for (const token of codeTokens(code)) {
    const start = code.lastIndexOf("\n", token.start - 1) + 1;
    const line = lines.at(-1);
    if (line && line.start === start) line.tokens.push(token);
    else lines.push({ start, column: token.start - start, tokens: [token] });
  }
  return lines;
}
