// Whether the theorem a whole file ends with states what the dataset states: token by
// token as Lean reads them (comments and whitespace do not count; names, binders,
// brackets and the type must be the same tokens in the same order). `theorem` and
// `lemma` declare the same kind of constant (Mathlib's `lemma` is a macro for
// `theorem`), so either keyword may begin it. The replay tier compares the elaborated
// types again, in a fresh environment, after Lean ran.
import { keywordOf } from "../commands.js";
import type { LeanToken } from "../tokens.js";

const THEOREM_WORDS: ReadonlySet<string> = new Set(["theorem", "lemma"]);

export interface StatementDifference {
  /** Index in `written` where they part (written.length when the written statement stops short). */
  at: number;
  expected: string;
  found: string;
}

/** The first place `written` differs from `expected`; undefined when they are the same statement. */
export function statementDifference(expected: readonly LeanToken[], written: readonly LeanToken[]): StatementDifference | undefined {
  const length = Math.max(expected.length, written.length);
  for (let i = 0; i < length; i++) {
    const want = expected[i];
    const got = written[i];
    if (want && got && sameToken(want, got, i)) continue;
    return { at: i, expected: want?.text ?? "(the end of the statement)", found: got?.text ?? "(the end of the statement)" };
  }
  return undefined;
}

function sameToken(expected: LeanToken, written: LeanToken, index: number): boolean {
  if (index === 0 && THEOREM_WORDS.has(keywordOf(expected) ?? "") && THEOREM_WORDS.has(keywordOf(written) ?? "")) return true;
  return expected.kind === written.kind && expected.text === written.text;
}
