// Declarations read from Lean's tokens, for the services that take a proof out of a
// completion or a statement out of a dataset record: which theorem a text declares and
// under what name, where its `:=` is (outside brackets: `(n : ℕ := 0)` is a binder
// default), where the next top-level command begins, and a statement with its trailing
// placeholder proof (`:= by sorry`) removed. One reading of Lean text, here; the
// services hold no Lean regex of their own.
import { commandStartedBy, keywordOf } from "./commands.js";
import { tokenize, type TokenizeOptions } from "./tokenize.js";
import type { LeanToken } from "./tokens.js";

const COMMENTS = new Set(["lineComment", "blockComment", "docComment"]);
const MODIFIERS = new Set(["private", "protected", "noncomputable", "nonrec", "public"]);
const THEOREM_KEYWORDS = new Set(["theorem", "lemma", "example"]);
const OPENING = new Set(["(", "[", "{", "⟨", "⦃", "@[", "#[", "%["]);
const CLOSING = new Set([")", "]", "}", "⟩", "⦄"]);

/** The tokens of `source` that Lean reads as code: comments dropped. */
export function codeTokens(source: string, options: TokenizeOptions = {}): LeanToken[] {
  return tokenize(source, options).tokens.filter((token) => !COMMENTS.has(token.kind));
}

export interface Declaration {
  keyword: "theorem" | "lemma" | "example";
  /** The declared name as written (`foo`, `Nat.foo`, `«my thm»`); "" for `example`. */
  name: string;
  /** Index in `tokens` of its first token (an attribute or modifier, else the keyword). */
  first: number;
  /** Index in `tokens` just past the name (past the keyword for `example`). */
  afterName: number;
}

/** Every `theorem`/`lemma`/`example` declaration, with its attributes (`@[simp]`) and modifiers. */
export function theoremDeclarations(tokens: readonly LeanToken[]): Declaration[] {
  const found: Declaration[] = [];
  const attributeStart = attributeStarts(tokens);
  for (let i = 0; i < tokens.length; i++) {
    const keyword = keywordOf(tokens[i]!);
    if (keyword === undefined || !THEOREM_KEYWORDS.has(keyword)) continue;
    let first = i;
    for (;;) {
      if (first > 0 && MODIFIERS.has(keywordOf(tokens[first - 1]!) ?? "")) first--;
      else if (first > 0 && attributeStart.has(first - 1)) {
        first = attributeStart.get(first - 1)!;
      } else break;
    }
    const named = keyword !== "example" && tokens[i + 1]?.kind === "identifier";
    found.push({
      keyword: keyword as Declaration["keyword"],
      name: named ? tokens[i + 1]!.text : "",
      first,
      afterName: named ? i + 2 : i + 1,
    });
  }
  return found;
}

/**
 * For each `]` that closes an attribute list, the index of its `@[` (brackets matched as
 * `[`/`@[` with `]`): read in one pass, so that many declarations after many brackets
 * cost no walk back each.
 */
function attributeStarts(tokens: readonly LeanToken[]): Map<number, number> {
  const starts = new Map<number, number>();
  const open: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const text = tokens[i]!.text;
    if (text === "[" || text === "@[") open.push(i);
    else if (text === "]") {
      const opened = open.pop();
      if (opened !== undefined && tokens[opened]!.text === "@[") starts.set(i, opened);
    }
  }
  return starts;
}

/** Index in `tokens` of the first `:=` at bracket depth 0 from `from` on; -1 when there is none. */
export function topLevelAssign(tokens: readonly LeanToken[], from: number): number {
  let depth = 0;
  for (let i = from; i < tokens.length; i++) {
    const text = tokens[i]!.text;
    if (tokens[i]!.kind !== "symbol") continue;
    if (OPENING.has(text)) depth++;
    else if (CLOSING.has(text)) depth = Math.max(0, depth - 1);
    else if (depth === 0 && text === ":=") return i;
  }
  return -1;
}

/**
 * Index in `tokens` of the first token from `from` on that begins a top-level command
 * at the start of a line of `source` (column 0), as a model's next declaration would;
 * tokens.length when there is none.
 */
export function nextCommandAtLineStart(source: string, tokens: readonly LeanToken[], from: number): number {
  for (let i = from; i < tokens.length; i++) {
    const token = tokens[i]!;
    const lineStart = token.start === 0 || source[token.start - 1] === "\n";
    if (lineStart && (commandStartedBy(token) !== undefined || THEOREM_KEYWORDS.has(keywordOf(token) ?? ""))) return i;
  }
  return tokens.length;
}

/** The name a statement declares (`theorem NAME …`/`lemma NAME …`, after attributes and modifiers). */
export function declaredTheoremName(statement: string): string | undefined {
  const tokens = codeTokens(statement);
  const declaration = theoremDeclarations(tokens).find((d) => d.keyword !== "example" && d.first === 0 && d.name !== "");
  return declaration?.name;
}

/**
 * The statement without a trailing placeholder proof: `:=`, `:= by`, `:= sorry` or
 * `:= by sorry` at its end (comments around them ignored), so that the statement is
 * the theorem without its proof. Anything else after `:=` is kept: it is not a placeholder.
 */
export function statementWithoutProof(statement: string): string {
  const tokens = codeTokens(statement);
  const tail = tokens.map((t) => t.text);
  for (const placeholder of [[":=", "by", "sorry"], [":=", "sorry"], [":=", "by"], [":="]]) {
    const at = tokens.length - placeholder.length;
    if (at >= 0 && placeholder.every((text, k) => tail[at + k] === text)) return statement.slice(0, tokens[at]!.start).trimEnd();
  }
  return statement.trimEnd();
}
