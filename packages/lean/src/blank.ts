// Source with parts replaced by spaces (newlines kept), so every remaining character
// stays at its line and column (Lean counts columns in code points; a blanked code
// point becomes one space).
import { tokenize, type TokenizeOptions } from "./tokenize.js";
import type { LeanToken, LeanTokenKind } from "./tokens.js";

const COMMENTS: ReadonlySet<LeanTokenKind> = new Set(["lineComment", "blockComment", "docComment"]);
const LITERALS: ReadonlySet<LeanTokenKind> = new Set(["string", "interpolatedChunk", "rawString", "char"]);

/**
 * Every token of `source`; after a lexical error, reading resumes one character
 * later, as Lean's command loop does, so a text that does not lex still has its
 * later comments found.
 */
export function tokensResynchronised(source: string, options: TokenizeOptions = {}): LeanToken[] {
  const tokens: LeanToken[] = [];
  let offset = 0;
  while (offset <= source.length) {
    const result = tokenize(offset === 0 ? source : source.slice(offset), options);
    // One push per token: spreading a long text's tokens into one call overflows the stack.
    for (const token of result.tokens)
      tokens.push(offset === 0 ? token : { ...token, start: token.start + offset, end: token.end + offset });
    if (!result.error) break;
    // Lean reads a token at the error (skipping it when it lexes), else moves one character on.
    offset += result.error.index > 0 ? result.error.index : 1;
  }
  return tokens;
}

function blankKinds(source: string, kinds: ReadonlySet<LeanTokenKind>, options: TokenizeOptions): string {
  return blankTokens(source, tokensResynchronised(source, options), kinds);
}

/** `source` with those of `tokens` (its own, in order) whose kind is in `kinds` blanked. */
function blankTokens(source: string, tokens: readonly LeanToken[], kinds: ReadonlySet<LeanTokenKind>): string {
  let out = "";
  let at = 0;
  for (const token of tokens) {
    if (!kinds.has(token.kind) || token.start < at) continue;
    out += source.slice(at, token.start) + Array.from(token.text, (ch) => (ch === "\n" ? "\n" : " ")).join("");
    at = token.end;
  }
  return out + source.slice(at);
}

/** Comments (`--`, `/- -/`, doc comments) blanked: what Lean elaborates, with nothing hidden in comments. */
export function blankComments(source: string, options: TokenizeOptions = {}): string {
  return blankKinds(source, COMMENTS, options);
}

/** Comments and string/char literals blanked: the code a reader should count words in. */
export function blankNonCode(source: string, options: TokenizeOptions = {}): string {
  return blankKinds(source, new Set([...COMMENTS, ...LITERALS]), options);
}

/** `source` with the comments among `tokens` (a reading of it made already, e.g. with a table that changes) blanked. */
export function blankCommentTokens(source: string, tokens: readonly LeanToken[]): string {
  return blankTokens(source, tokens, COMMENTS);
}
