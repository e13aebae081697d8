// Hand-made edge cases, one group per rule of Lean's lexer (Lean/Parser/Basic.lean).
import { describe, expect, it } from "vitest";
import { blankComments, blankNonCode, commandStartedBy, tokenize, type LeanToken } from "../src/index.js";

const kinds = (tokens: LeanToken[]) => tokens.map((t) => `${t.kind}:${t.text}`);
const lex = (source: string, options = {}) => {
  const result = tokenize(source, options);
  expect(result.error, source).toBeUndefined();
  return kinds(result.tokens);
};
const errorOf = (source: string) => tokenize(source).error;

describe("comments", () => {
  it("nests block comments, and tells doc comments apart", () => {
    expect(lex("/- a /- b -/ c -/ x")).toEqual(["blockComment:/- a /- b -/ c -/", "identifier:x"]);
    expect(lex("/-- doc /- inner -/ -/ y")).toEqual(["docComment:/-- doc /- inner -/ -/", "identifier:y"]);
    expect(lex("/-! module doc -/")).toEqual(["docComment:/-! module doc -/"]);
  });

  it("ends a line comment at the newline, and starts one right after a token", () => {
    expect(lex("a--b\nc")).toEqual(["identifier:a", "lineComment:--b", "identifier:c"]);
    expect(lex("x/-y-/z")).toEqual(["identifier:x", "blockComment:/-y-/", "identifier:z"]);
  });

  it("runs an unterminated block comment to the end, marked unterminated, and reports Lean's error at the end", () => {
    expect(kinds(tokenize("simp /- open").tokens)).toEqual(["identifier:simp", "blockComment:/- open"]);
    expect(errorOf("simp /- open")).toEqual({ message: "unterminated comment", index: 12 });
    expect(errorOf("/-- doc")).toEqual({ message: "unterminated comment", index: 7 });
    expect(tokenize("simp /- open").tokens[1]!.unterminated).toBe(true);
    expect(tokenize("simp /- a /- b -/ open").tokens[1]!.unterminated).toBe(true);
    expect(tokenize("/-- doc").tokens[0]).toMatchObject({ kind: "docComment", unterminated: true });
    expect(tokenize("simp /- a /- b -/ c -/ x").tokens[1]!.unterminated).toBeUndefined();
  });

  it("skips the character after `/-` as Lean's whitespace does: it neither nests nor closes the comment", () => {
    expect(lex("x /-/- -/ y")).toEqual(["identifier:x", "blockComment:/-/- -/", "identifier:y"]);
    expect(lex("x /--/ y -/ z")).toEqual(["identifier:x", "docComment:/--/ y -/", "identifier:z"]);
    expect(lex("x /-!/ y -/ z")).toEqual(["identifier:x", "docComment:/-!/ y -/", "identifier:z"]);
    expect(kinds(tokenize("x /--/").tokens)).toEqual(["identifier:x", "docComment:/--/"]);
    expect(tokenize("x /--/").tokens[1]!.unterminated).toBe(true);
    expect(tokenize("x /-").tokens[1]!.unterminated).toBe(true);
    expect(lex("x /-😀-/ y")).toEqual(["identifier:x", "blockComment:/-😀-/", "identifier:y"]);
  });
});

describe("whitespace", () => {
  // Lean's `whitespace` refuses both; after the error it reads on from there, so nothing is hidden, but the text is not Lean.
  it("refuses a tab and a carriage return that is not part of CRLF, outside literals and comments", () => {
    expect(errorOf("by\n\tsimp")).toEqual({ message: "tabs are not allowed; please configure your editor to expand them", index: 3 });
    expect(errorOf("by simp\rrfl")).toEqual({ message: "isolated carriage returns are not allowed", index: 7 });
    expect(lex("by simp\r\n  rfl")).toEqual(["identifier:by", "identifier:simp", "identifier:rfl"]);
    expect(lex('"a\tb" -- c\td\n/- \t -/ x')).toEqual(['string:"a\tb"', "lineComment:-- c\td", "blockComment:/- \t -/", "identifier:x"]);
  });
});

describe("string literals", () => {
  it("reads Lean's escapes and string gaps, and refuses others", () => {
    expect(lex(String.raw`"a\"b\\c\n\t\r\'\x41\u03B1" x`)).toEqual([String.raw`string:"a\"b\\c\n\t\r\'\x41\u03B1"`, "identifier:x"]);
    expect(lex('"ab\\\n    cd"')).toEqual(['string:"ab\\\n    cd"']);
    expect(errorOf(String.raw`"\q"`)).toEqual({ message: "invalid escape sequence", index: 2 });
    expect(errorOf(String.raw`"\x4"`)?.message).toBe("invalid hexadecimal numeral");
    expect(errorOf('"never closed -- theorem')).toEqual({ message: "unterminated string literal", index: 0 });
  });

  it("opens a string gap only with `\\` then LF, and refuses a second newline in it, as Lean's stringGapFn does", () => {
    // After either error Lean resumes inside the string and reads `#eval` as code: the screen must not call it a string.
    expect(lex('"ab\\\n  \r  cd"')).toEqual(['string:"ab\\\n  \r  cd"']);
    expect(errorOf('"ab\\\r\n#eval 1"')).toEqual({ message: "invalid escape sequence", index: 4 });
    expect(errorOf('"ab\\\n\n#eval 1"')).toEqual({ message: "unexpected additional newline in string gap", index: 5 });
    expect(errorOf('"ab\\\n  \n#eval 1"')).toEqual({ message: "unexpected additional newline in string gap", index: 7 });
    expect(errorOf("'\\\n'")).toEqual({ message: "invalid escape sequence", index: 2 });
  });

  it("keeps comment markers inside a string", () => {
    expect(lex('"-- not /- a comment" y')).toEqual(['string:"-- not /- a comment"', "identifier:y"]);
  });

  it("reads the terms of an interpolated string as tokens", () => {
    expect(lex('s!"a {x + "}"} b" z')).toEqual([
      "identifier:s!",
      'interpolatedChunk:"a {',
      "identifier:x",
      "symbol:+",
      'string:"}"',
      'interpolatedChunk:} b"',
      "identifier:z",
    ]);
    expect(lex('s!"\\{not a hole}"')).toEqual(["identifier:s!", 'interpolatedChunk:"\\{not a hole}"']);
  });

  it("reads a plain string's braces as text, unless asked to read every string as interpolated", () => {
    expect(lex('"{#eval 1}"')).toEqual(['string:"{#eval 1}"']);
    expect(lex('"{#eval 1}"', { interpolation: "always" })).toEqual([
      'interpolatedChunk:"{',
      "hashCommand:#eval",
      "number:1",
      'interpolatedChunk:}"',
    ]);
  });
});

describe("raw strings", () => {
  it("closes on a quote followed by as many #s as opened, with no escapes", () => {
    expect(lex('r"a\\q" x')).toEqual(['rawString:r"a\\q"', "identifier:x"]);
    expect(lex('r#"a "b" c"# x')).toEqual(['rawString:r#"a "b" c"#', "identifier:x"]);
    expect(lex('r##"a "# b"## x')).toEqual(['rawString:r##"a "# b"##', "identifier:x"]);
    expect(errorOf('r#"open')).toEqual({ message: "unterminated raw string literal", index: 0 });
  });

  it("is an identifier `r` when no quote follows the #s, and part of a longer identifier otherwise", () => {
    expect(lex("r#eval")).toEqual(["identifier:r", "hashCommand:#eval"]);
    expect(lex('xr"s"')).toEqual(["identifier:xr", 'string:"s"']);
  });
});

describe("character literals and quotes", () => {
  it("reads one character or escape between quotes, and ends there", () => {
    expect(lex("'a'theorem")).toEqual(["char:'a'", "identifier:theorem"]);
    expect(lex(String.raw`'\n' '\x41' '\u03B1' '"'`)).toEqual([
      String.raw`char:'\n'`,
      String.raw`char:'\x41'`,
      String.raw`char:'\u03B1'`,
      `char:'"'`,
    ]);
    expect(lex("'𝔽'")).toEqual(["char:'𝔽'"]);
    expect(errorOf("'ab'")).toEqual({ message: "missing end of character literal", index: 2 });
  });

  it("keeps a prime inside an identifier, and reads Mathlib's quote-ended symbols", () => {
    expect(lex("h' x''")).toEqual(["identifier:h'", "identifier:x''"]);
    expect(lex("f '' s")).toEqual(["identifier:f", "symbol:''", "identifier:s"]);
    expect(lex("f ⁻¹' s")).toEqual(["identifier:f", "symbol:⁻¹'", "identifier:s"]);
    expect(lex("∑' i, g i")).toEqual(["symbol:∑'", "identifier:i", "symbol:,", "identifier:g", "identifier:i"]);
  });
});

describe("identifiers", () => {
  it("follows Lean's Unicode rules: Greek and letterlike yes, λ Π Σ and non-ASCII Latin no", () => {
    expect(lex("α₁ ℝ 𝔽x β'")).toEqual(["identifier:α₁", "identifier:ℝ", "identifier:𝔽x", "identifier:β'"]);
    expect(lex("λx")).toEqual(["symbol:λ", "identifier:x"]);
    expect(lex("xétheorem")).toEqual(["identifier:x", "symbol:é", "identifier:theorem"]);
    expect(lex("Πx Σy")).toEqual(["symbol:Π", "identifier:x", "symbol:Σ", "identifier:y"]);
  });

  it("joins dotted parts, plain or «escaped», and stops at a dot not followed by a part", () => {
    const [token] = tokenize("«my thm».x.«a.b»").tokens;
    expect(token).toMatchObject({ kind: "identifier", components: ["my thm", "x", "a.b"], escaped: true });
    expect(lex("Nat.succ_le_of_lt.")).toEqual(["identifier:Nat.succ_le_of_lt", "symbol:."]);
    expect(lex("apply? exact! x.1")).toEqual(["identifier:apply?", "identifier:exact!", "identifier:x", "symbol:.", "fieldIndex:1"]);
    expect(errorOf("«never closed")).toEqual({ message: "unterminated identifier escape", index: 1 });
  });

  it("reads name literals", () => {
    expect(lex("`Nat.succ `«a b»")).toEqual(["nameLiteral:`Nat.succ", "nameLiteral:`«a b»"]);
  });
});

describe("numerals", () => {
  it("reads decimal, based and scientific numerals, and ends them at the first other character", () => {
    expect(lex("42 0x2A 0b101 0o52 1.5 2e10 1.5e-3 2theorem")).toEqual([
      "number:42",
      "number:0x2A",
      "number:0b101",
      "number:0o52",
      "scientific:1.5",
      "scientific:2e10",
      "scientific:1.5e-3",
      "number:2",
      "identifier:theorem",
    ]);
    expect(errorOf("0x")?.message).toBe("expected hexadecimal number");
    // Digit separators (Lean's takeDigitsFn): `_` then a digit continues the numeral; `_` then anything else is an
    // error there, after which Lean reads on from that character, so `2_axiom` hides no name `_axiom`.
    expect(lex("1_000 0x_FF 0b1_0 1_0.2_5e1_0 0_1")).toEqual([
      "number:1_000",
      "number:0x_FF",
      "number:0b1_0",
      "scientific:1_0.2_5e1_0",
      "number:0_1",
    ]);
    expect(errorOf("by exact 2_axiom cheat : False")).toEqual({
      message: "unexpected character (a digit must follow `_` in a numeral)",
      index: 11,
    });
    expect(errorOf("1__")?.index).toBe(3);
    // A field index never starts with 0 (Lean's fieldIdxFn): `h.0…` is read as a numeral, as Lean's recovery reads it.
    expect(lex("h.1_000 h.2e5")).toEqual([
      "identifier:h",
      "symbol:.",
      "fieldIndex:1",
      "identifier:_000",
      "identifier:h",
      "symbol:.",
      "fieldIndex:2",
      "identifier:e5",
    ]);
    expect(errorOf("by exact h.0_axiom cheat : False")?.index).toBe(13);
    expect(errorOf("1e+")?.message).toBe("missing exponent digits in scientific literal");
  });

  it("stops a numeral before `..`, and refuses an identifier glued after a bare decimal point", () => {
    expect(lex("[1..5]")).toEqual(["symbol:[", "number:1", "symbol:..", "number:5", "symbol:]"]);
    expect(lex("1. 2.) 1.e5")).toEqual(["scientific:1.", "scientific:2.", "symbol:)", "scientific:1.e5"]);
    expect(errorOf("x + 2.foo")).toEqual({
      message: "unexpected identifier after decimal point; consider parenthesizing the number",
      index: 4,
    });
    expect(errorOf("2.«x»")?.index).toBe(0);
    expect(lex("h.2.le")).toEqual(["identifier:h", "symbol:.", "fieldIndex:2", "symbol:.", "identifier:le"]);
  });

  it("reads the digits after a glued dot as field indices (h.2.1 is not h . 2.1)", () => {
    expect(lex("h.2.1")).toEqual(["identifier:h", "symbol:.", "fieldIndex:2", "symbol:.", "fieldIndex:1"]);
    expect(lex("(f x).2")).toEqual(["symbol:(", "identifier:f", "identifier:x", "symbol:)", "symbol:.", "fieldIndex:2"]);
  });
});

describe("#-commands and command starts", () => {
  it("ends the token before a # glued to it, and reads # and a word as one token", () => {
    expect(lex("x#eval 1")).toEqual(["identifier:x", "hashCommand:#eval", "number:1"]);
    expect(lex("#[1, 2]")).toEqual(["symbol:#[", "number:1", "symbol:,", "number:2", "symbol:]"]);
  });

  it("names the command a token begins: keywords (never escaped or dotted), #words and @[", () => {
    const starts = (source: string) =>
      tokenize(source)
        .tokens.map((token) => commandStartedBy(token))
        .filter((c) => c !== undefined);
    expect(starts("theorem «theorem» Foo.theorem theorem_x #exit @[simp] run_cmd alias")).toEqual([
      "theorem",
      "#exit",
      "@[",
      "run_cmd",
      "alias",
    ]);
    expect(starts("by simp [Nat.add_comm]; exact h.1")).toEqual([]);
  });
});

describe("blanking", () => {
  it("blanks comments code point by code point, keeping newlines, and nothing inside strings", () => {
    expect(blankComments("by simp -- sorry\n  rfl")).toBe("by simp         \n  rfl");
    expect(blankComments("/- 𝔽 ∀ -/x")).toBe(`${" ".repeat(9)}x`);
    expect(blankComments('exact "-- kept"')).toBe('exact "-- kept"');
    expect(blankComments("exact h' -- c")).toBe("exact h'     ");
  });

  it("blanks literals too for readers of code", () => {
    expect(blankNonCode("exact 'a' \"sorry\" -- x\nrfl")).toBe(`exact ${" ".repeat(16)}\nrfl`);
  });

  it("keeps finding comments after a lexical error, resuming as Lean does", () => {
    expect(blankComments("'ab' -- c")).toBe("'ab'     ");
  });
});
