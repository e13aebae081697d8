// The tokens of Lean 4 source, as `tokenFn` (Lean/Parser/Basic.lean) reads them.
// Positions are UTF-16 indices into the source (JavaScript string indices); `end`
// is exclusive.

export type LeanTokenKind =
  /** `-- ...` up to (not including) the newline. */
  | "lineComment"
  /** `/- ... -/`, nested; unterminated ones run to the end of the source. */
  | "blockComment"
  /** `/-- ... -/` and `/-! ... -/`: tokens for Lean (doc strings), nested like block comments. */
  | "docComment"
  /** `"..."` with escapes (the whole literal, quotes included). */
  | "string"
  /** A piece of an interpolated string: `"...{`, `}...{` or `}..."`; the term tokens come between pieces. */
  | "interpolatedChunk"
  /** `r"..."`, `r#"..."#`: no escapes. */
  | "rawString"
  /** `'a'`, `'\n'`, `'\x41'`, `'\u03B1'`. */
  | "char"
  /** `42`, `0x2A`, `0b101`, `0o52`. */
  | "number"
  /** `1.5`, `2e10`, `1.5e-3`. */
  | "scientific"
  /** The digits of `h.2` after the `.` (Lean's fieldIdx). */
  | "fieldIndex"
  /** An identifier or keyword: dotted parts, each plain or «escaped». Lean's token table decides keywords. */
  | "identifier"
  /** `` `foo.bar `` */
  | "nameLiteral"
  /** `#` glued to a word: `#eval`, `#print`, `#check` (and Mathlib's `#find`, ...). */
  | "hashCommand"
  /** Anything else: `:=`, `@[`, `(`, `∑`, ... */
  | "symbol";

export interface LeanToken {
  kind: LeanTokenKind;
  text: string;
  start: number;
  end: number;
  /** identifier: its dotted components, unescaped (`«a b».c` → ["a b", "c"]). */
  components?: string[];
  /** identifier: whether any component was «escaped» (then it is never a keyword). */
  escaped?: boolean;
  /** blockComment / docComment: no `-/` closes it (Lean: "unterminated comment"); it runs to the end. */
  unterminated?: boolean;
}

export interface LexError {
  /** Lean's wording where it has one, e.g. "unterminated string literal". */
  message: string;
  /** UTF-16 index where Lean reports it. */
  index: number;
}

export interface LexResult {
  /** Tokens in order, comments included, up to the first error. */
  tokens: LeanToken[];
  /** The first lexical error; after one, Lean resynchronises character by character, so nothing after it is trusted. */
  error?: LexError;
}
