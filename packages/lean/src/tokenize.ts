// One Lean 4 lexer, following `tokenFn` and `whitespace` in Lean/Parser/Basic.lean:
// nested `/- -/` comments and doc comments, `--` comments, string literals with
// Lean's escapes (and interpolation), raw strings `r#"…"#`, character literals,
// «escaped» identifiers, numerals, `#`-commands, and identifiers by Lean's Unicode
// rules (characters.ts).
//
// Symbols and keywords are read as Lean reads them: by longest match against the
// environment's token table (token-table.ts), in Lean's order — strings, character
// literals, numerals, name literals and raw strings first, then the table, where an
// identifier wins only when it is longer than the token there (`identFnAux`,
// `mkIdResult`). So `⁻¹'` and `×ˢ` are one token each and their quote opens no
// character literal, and on an environment's table `#s` (Mathlib's card notation) is
// `#` then `s` while `#eval` is one token. Keywords keep the kind "identifier" (a
// one-part plain word); the table decides which words those are. Where Lean would
// report a lexical error this stops with that error — in a literal, in a numeral, in
// whitespace (a tab, a carriage return not before a line feed) and at an unterminated
// comment: Lean's recovery after one re-reads the text from inside the broken token,
// where this lexer reads nothing, so a caller that trusts nothing after an error stays
// on the safe side.
import { BUILTIN_TABLE } from "./builtin-tokens.js";
import { isDigit, isHexDigit, isIdFirst, isIdRest, isWhitespace } from "./characters.js";
import type { TokenTable } from "./token-table.js";
import type { LeanToken, LexError, LexResult } from "./tokens.js";

export interface TokenizeOptions {
  /**
   * Which string literals are read as interpolated (`s!"x = {x}"`): "auto" after the
   * interpolating words (`s!`, `m!`, `f!`, `throwError`, ...), "always" for every one.
   * A screen that must not depend on context reads both ways.
   */
  interpolation?: "auto" | "always";
  /** The environment's token table; default BUILTIN_TABLE (the fallback, which may miss Mathlib's tokens). */
  tokens?: TokenTable;
  /**
   * Called with each token read outside string interpolations (and those before it); a table it returns is
   * the table from that token's start on, and the token is read again with it. Lean's table changes between
   * commands (a notation adds its atoms), and where one command ends is known only at the next one's token.
   */
  retable?: (token: LeanToken, tokens: readonly LeanToken[]) => TokenTable | undefined;
}

/** Words after which Lean's grammar reads an interpolated string (`interpolatedStr` in core and Mathlib syntax). */
const INTERPOLATING = new Set(["s!", "m!", "f!", "throwError", "throwErrorAt", "logInfo", "logWarning", "logError", "dbg_trace"]);

/** How deep string interpolations may nest (`s!"{s!"{…}"}"`) before the lexer stops as at a lexical error. */
const MAX_INTERPOLATION_DEPTH = 64;

class LexFailure extends Error {
  constructor(readonly lexError: LexError) {
    super(lexError.message);
  }
}

export function tokenize(source: string, options: TokenizeOptions = {}): LexResult {
  const lexer = new Lexer(source, options.interpolation ?? "auto", options.tokens ?? BUILTIN_TABLE, options.retable);
  try {
    lexer.run(false);
    return { tokens: lexer.tokens };
  } catch (error) {
    if (error instanceof LexFailure) return { tokens: lexer.tokens, error: error.lexError };
    throw error;
  }
}

class Lexer {
  readonly tokens: LeanToken[] = [];
  private i = 0;
  private interpolationDepth = 0;

  constructor(
    private readonly src: string,
    private readonly interpolation: "auto" | "always",
    private table: TokenTable,
    private readonly retable?: TokenizeOptions["retable"],
  ) {}

  private cp(at = this.i): number {
    return at < this.src.length ? this.src.codePointAt(at)! : -1;
  }

  private width(at: number): number {
    const cp = this.cp(at);
    return cp > 0xffff ? 2 : 1;
  }

  private fail(message: string, index: number): never {
    throw new LexFailure({ message, index });
  }

  private push(kind: LeanToken["kind"], start: number, extra: Partial<LeanToken> = {}): LeanToken {
    const token: LeanToken = { kind, text: this.src.slice(start, this.i), start, end: this.i, ...extra };
    this.tokens.push(token);
    return token;
  }

  /** Reads tokens to the end, or (inside an interpolation) up to the `}` that closes it. */
  run(insideInterpolation: boolean): void {
    let depth = 0;
    for (;;) {
      this.skipWhitespace();
      if (this.i >= this.src.length) {
        if (insideInterpolation) this.fail("unterminated string interpolation", this.i);
        return;
      }
      const ch = this.src[this.i]!;
      if (insideInterpolation && ch === "}" && depth === 0) return;
      if (ch === "{") depth++;
      else if (ch === "}") depth--;
      const before = this.tokens.length;
      this.token();
      const read = this.tokens[before];
      const table = !insideInterpolation && read && this.retable?.(read, this.tokens);
      if (table) {
        this.tokens.length = before;
        this.i = read.start;
        this.table = table;
      }
    }
  }

  /** Lean's `whitespace`: spaces and newlines; a tab, or a carriage return not before a line feed, is its error. */
  private skipWhitespace(): void {
    while (this.i < this.src.length && isWhitespace(this.cp())) {
      if (this.src[this.i] === "\t") this.fail("tabs are not allowed; please configure your editor to expand them", this.i);
      if (this.src[this.i] === "\r" && this.src[this.i + 1] !== "\n") this.fail("isolated carriage returns are not allowed", this.i);
      this.i++;
    }
  }

  private token(): void {
    const start = this.i;
    const ch = this.src[start]!;
    const next = this.src[start + 1];
    if (ch === "-" && next === "-") {
      const newline = this.src.indexOf("\n", start);
      this.i = newline < 0 ? this.src.length : newline;
      this.push("lineComment", start);
    } else if (ch === "/" && next === "-") {
      const third = this.src[start + 2];
      // Lean's whitespace reads the character after `/-` (to tell `/--` and `/-!`) and skips it: the body starts after it.
      const end = this.commentEnd(start + 2 + (start + 2 < this.src.length ? this.width(start + 2) : 1));
      this.i = end ?? this.src.length;
      this.push(third === "-" || third === "!" ? "docComment" : "blockComment", start, end === undefined ? { unterminated: true } : {});
      // Lean reports it at the end of the input; the token stays, marked, for callers that blank comments.
      if (end === undefined) this.fail("unterminated comment", this.src.length);
    } else if (ch === '"') {
      this.string(start);
    } else if (ch === "'") {
      this.quote(start);
    } else if (isDigit(this.cp())) {
      this.number(start);
    } else if (ch === "`" && next !== undefined && (isIdFirst(this.cp(start + 1)) || next === "«")) {
      this.i++;
      this.identifierParts();
      this.push("nameLiteral", start);
    } else if (ch === "r" && this.rawStringAhead()) {
      this.rawString(start);
    } else {
      this.tableToken(start);
    }
  }

  /** An identifier, or the table's longest token here when it is at least as long (Lean's identFnAux/mkIdResult). */
  private tableToken(start: number): void {
    const token = this.table.longestMatch(this.src, start);
    const ch = this.src[start]!;
    if (isIdFirst(this.cp()) || ch === "«") {
      const { components, escaped } = this.identifierParts();
      if (token === undefined || token.length < this.i - start) {
        this.push("identifier", start, { components, escaped });
        return;
      }
      this.i = start;
    }
    if (ch === "#" && isIdFirst(this.cp(start + 1))) {
      if (this.table.source === "builtin") {
        // The fallback may miss Mathlib's `#` commands, and a missed command must not pass: every `#word` is one.
        this.i = start + 1;
        while (this.i < this.src.length && isIdRest(this.cp())) this.i += this.width(this.i);
        this.push("hashCommand", start);
        return;
      }
      if (token !== undefined && token.length > 1) {
        this.i = start + token.length;
        this.push("hashCommand", start);
        return;
      }
    }
    this.i = start + (token?.length ?? this.width(start));
    const word = this.isWord(start, this.i);
    this.push(word ? "identifier" : "symbol", start, word ? { components: [this.src.slice(start, this.i)], escaped: false } : {});
  }

  /** Whether `src[from, to)` is a word by Lean's identifier rules (a keyword of the table, such as `theorem`). */
  private isWord(from: number, to: number): boolean {
    for (let at = from; at < to; at += this.width(at)) {
      if (!(at === from ? isIdFirst(this.cp(at)) : isIdRest(this.cp(at)))) return false;
    }
    return true;
  }

  /** Index just past the `-/` closing a comment whose body starts at `from` (Lean's finishCommentBlock); undefined when none does. */
  private commentEnd(from: number): number | undefined {
    let nesting = 1;
    let i = from;
    while (i < this.src.length) {
      if (this.src[i] === "-" && this.src[i + 1] === "/") {
        i += 2;
        if (--nesting === 0) return i;
      } else if (this.src[i] === "/" && this.src[i + 1] === "-") {
        i += 2;
        nesting++;
      } else {
        i++;
      }
    }
    // Lean reports "unterminated comment"; the token runs to the end, marked, so a caller can refuse it as Lean does.
    return undefined;
  }

  /** A `'`: a character literal, unless `''` (then a table token, as Lean checks the next character first). */
  private quote(start: number): void {
    if (this.src[start + 1] === "'") {
      this.tableToken(start);
      return;
    }
    this.i = start + 1;
    if (this.i >= this.src.length) this.fail("unexpected end of input", this.i);
    if (this.src[this.i] === "\\") this.escape(false);
    else this.i += this.width(this.i);
    if (this.src[this.i] !== "'") this.fail("missing end of character literal", this.i);
    this.i++;
    this.push("char", start);
  }

  /** An escape after `\` at `this.i` (Lean's quotedCharCoreFn); `inString` also allows gaps and (interpolated) `\{`. */
  private escape(inString: boolean, interpolated = false): void {
    const at = this.i + 1;
    const ch = this.src[at];
    if (ch === undefined) this.fail("unexpected end of input", at);
    if ("\\\"'rnt".includes(ch) || (interpolated && ch === "{")) {
      this.i = at + 1;
    } else if (ch === "x" || ch === "u") {
      const digits = ch === "x" ? 2 : 4;
      for (let k = 1; k <= digits; k++) {
        if (!isHexDigit(this.cp(at + k))) this.fail("invalid hexadecimal numeral", at + k);
      }
      this.i = at + 1 + digits;
    } else if (inString && ch === "\n") {
      // A string gap (Lean's stringGapFn): `\`, one newline, then whitespace, are not part of the string. Only
      // `\n` opens one (`\` then `\r` is an invalid escape; the verifier sends LF line ends), and a second
      // newline is Lean's error, after which Lean would read the rest of the string as code.
      this.i = at + 1;
      while (this.i < this.src.length && isWhitespace(this.cp())) {
        if (this.src[this.i] === "\n") this.fail("unexpected additional newline in string gap", this.i);
        this.i++;
      }
    } else {
      this.fail("invalid escape sequence", at);
    }
  }

  private string(start: number): void {
    const previous = this.tokens.at(-1);
    const interpolated =
      this.interpolation === "always" || (previous?.kind === "identifier" && !previous.escaped && INTERPOLATING.has(previous.text));
    this.i = start + 1;
    let chunkStart = start;
    for (;;) {
      if (this.i >= this.src.length) this.fail("unterminated string literal", start);
      const ch = this.src[this.i]!;
      if (ch === "\\") {
        this.escape(true, interpolated);
      } else if (ch === '"') {
        this.i++;
        this.push(interpolated ? "interpolatedChunk" : "string", chunkStart);
        return;
      } else if (ch === "{" && interpolated) {
        this.i++;
        this.push("interpolatedChunk", chunkStart);
        // Each level is a recursion here: past a depth no honest text reaches, stop as at an error, not a stack overflow.
        if (++this.interpolationDepth > MAX_INTERPOLATION_DEPTH) {
          this.fail(`string interpolations nested more than ${MAX_INTERPOLATION_DEPTH} deep`, this.i - 1);
        }
        this.run(true);
        this.interpolationDepth--;
        chunkStart = this.i;
        this.i++; // the closing `}` belongs to the next chunk
      } else {
        this.i += this.width(this.i);
      }
    }
  }

  /** `r` then `#`s then `"` (Lean's isRawStrLitStart). */
  private rawStringAhead(): boolean {
    let i = this.i + 1;
    while (this.src[i] === "#") i++;
    return this.src[i] === '"';
  }

  private rawString(start: number): void {
    let hashes = 0;
    this.i = start + 1;
    while (this.src[this.i] === "#") {
      hashes++;
      this.i++;
    }
    this.i++; // the opening quote
    for (;;) {
      const close = this.src.indexOf('"', this.i);
      if (close < 0) this.fail("unterminated raw string literal", start);
      let run = 0;
      while (run < hashes && this.src[close + 1 + run] === "#") run++;
      this.i = close + 1 + run;
      if (run === hashes) break;
    }
    this.push("rawString", start);
  }

  private number(start: number): void {
    const previous = this.tokens.at(-1);
    const beforeDot = this.tokens.at(-2);
    if (previous?.text === "." && previous.end === start && beforeDot?.end === previous.start && this.src[start] !== "0") {
      // `h.2`: a field index, digits only (`h.2.1` is two of them, not the numeral 2.1). Lean's fieldIdxFn takes
      // none that starts with 0: `h.0…` is its parse error, after which it reads a numeral there (`h.0_axiom`).
      while (isDigit(this.cp())) this.i++;
      this.push("fieldIndex", start);
      return;
    }
    const radix = this.src[start] === "0" ? this.src[start + 1]?.toLowerCase() : undefined;
    const digitOf: Record<string, [(cp: number) => boolean, string]> = {
      b: [(cp) => cp === 0x30 || cp === 0x31, "binary number"],
      o: [(cp) => cp >= 0x30 && cp <= 0x37, "octal number"],
      x: [isHexDigit, "hexadecimal number"],
    };
    const based = radix === undefined ? undefined : digitOf[radix];
    if (based) {
      this.i = start + 2;
      if (!based[0](this.cp()) && this.src[this.i] !== "_") this.fail(`expected ${based[1]}`, this.i);
      this.digits(based[0], true);
      this.push("number", start);
      return;
    }
    this.i++;
    this.digits(isDigit, false);
    let scientific = false;
    // `1..5` is the numeral 1 then `..` (Lean looks two characters ahead before taking a decimal point).
    if (this.src[this.i] === "." && this.src[this.i + 1] !== ".") {
      scientific = true;
      this.i++;
      if (isDigit(this.cp())) this.digits(isDigit, false);
      else if (!/[eE]/.test(this.src[this.i] ?? "") && (isIdFirst(this.cp()) || this.src[this.i] === "«")) {
        // `2.foo`: Lean's error, reported at the numeral (older Lean read `2.` then `foo`; either way no name is hidden).
        this.fail("unexpected identifier after decimal point; consider parenthesizing the number", start);
      }
    }
    if (this.src[this.i] === "e" || this.src[this.i] === "E") {
      scientific = true;
      this.i++;
      if (this.src[this.i] === "+" || this.src[this.i] === "-") this.i++;
      if (!isDigit(this.cp())) this.fail("missing exponent digits in scientific literal", this.i);
      this.digits(isDigit, false);
    }
    this.push(scientific ? "scientific" : "number", start);
  }

  /**
   * Digits with `_` separators (Lean's takeDigitsFn: `many (many '_' >> many1 digit)`): a `_` must be followed,
   * after more `_`s, by a digit, else Lean stops with an error there, and resumes reading *after* it: `2_axiom`
   * is the numeral `2_` failing, then the command `axiom`, not `2` and the name `_axiom`.
   */
  private digits(isDigitHere: (cp: number) => boolean, needDigit: boolean): void {
    for (;;) {
      const cp = this.cp();
      if (cp === 0x5f) needDigit = true;
      else if (cp >= 0 && isDigitHere(cp)) needDigit = false;
      else if (needDigit) this.fail("unexpected character (a digit must follow `_` in a numeral)", this.i);
      else return;
      this.i++;
    }
  }

  /** Dotted parts from `this.i`, each plain or «escaped» (Lean's identFnAux). */
  private identifierParts(): { components: string[]; escaped: boolean } {
    const components: string[] = [];
    let escaped = false;
    for (;;) {
      if (this.src[this.i] === "«") {
        const close = this.src.indexOf("»", this.i + 1);
        if (close < 0) this.fail("unterminated identifier escape", this.i + 1);
        components.push(this.src.slice(this.i + 1, close));
        escaped = true;
        this.i = close + 1;
      } else {
        const partStart = this.i;
        this.i += this.width(this.i);
        while (this.i < this.src.length && isIdRest(this.cp())) this.i += this.width(this.i);
        components.push(this.src.slice(partStart, this.i));
      }
      const after = this.src[this.i + 1];
      if (this.src[this.i] !== "." || after === undefined || !(after === "«" || isIdFirst(this.cp(this.i + 1)))) break;
      this.i++;
    }
    return { components, escaped };
  }
}
