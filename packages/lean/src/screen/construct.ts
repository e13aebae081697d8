// One entry of the screen: a construct refused before Lean runs, the parts of the
// source it is refused in, why, and how to find it in Lean's tokens.
import type { TokenTable } from "../token-table.js";
import type { LeanToken } from "../tokens.js";

/** The parts of a checked source: the dataset's statement and context, and the model's proof (or tactic). */
export type SourcePart = "statement" | "context" | "proof";

export interface BannedConstruct {
  /** How reasons name it, e.g. "sorry", "#eval", "set_option debug.*". */
  name: string;
  why: string;
  /** The parts it is refused in. */
  parts: readonly SourcePart[];
  /**
   * Whether the construct begins at `tokens[at]`; the index just past its last token
   * when it does. The redeclaration entry depends on the theorem's name; `source` is
   * the text the tokens' positions index.
   */
  matchAt(tokens: readonly LeanToken[], at: number, theoremName: string, table: TokenTable, source: string): number | undefined;
  /**
   * The keys of the tokens it can begin at (startKeysOf), when it names them: the screen
   * then tries it only there. Without them it is tried at every token.
   */
  startKeys?: ReadonlySet<string>;
}

export const EVERYWHERE: readonly SourcePart[] = ["statement", "context", "proof"];
export const PROOF_ONLY: readonly SourcePart[] = ["proof"];
/** The dataset's parts: the context and the statement. */
export const THEOREM_ONLY: readonly SourcePart[] = ["statement", "context"];

export type Matcher = BannedConstruct["matchAt"];

export function construct(
  name: string,
  why: string,
  parts: readonly SourcePart[],
  matchAt: Matcher,
  startKeys?: Iterable<string>,
): BannedConstruct {
  return { name, why, parts, matchAt, ...(startKeys === undefined ? {} : { startKeys: new Set(startKeys) }) };
}

/** What a token is looked up by: an identifier's components (a keyword is one), `#command` for a `#` command, else its text. */
export function startKeysOf(token: LeanToken): readonly string[] {
  if (token.kind === "identifier") return token.components!;
  return token.kind === "hashCommand" ? [HASH_COMMAND] : [token.text];
}

/** The key of every `#` command token (`#eval`, `#evalx`, Mathlib's `#find`). */
export const HASH_COMMAND = "#command";

/** One token matching `test`. */
export function single(test: (token: LeanToken) => boolean): Matcher {
  return (tokens, at) => (test(tokens[at]!) ? at + 1 : undefined);
}
