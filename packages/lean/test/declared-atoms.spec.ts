// A context read with the atoms its notation declares, from the command after each
// declaration on, as Lean's command loop lexes it; the atoms Lean would take, and the
// tables the statement and proof are read with.
import { describe, expect, it } from "vitest";
import { BUILTIN_TABLE, readDeclaringAtoms, tablesAfterContext, tokenize, withAtoms } from "../src/index.js";

const texts = (context: string) => readDeclaringAtoms(context, BUILTIN_TABLE, "context").declared.tokens.map((token) => token.text);

describe("readDeclaringAtoms", () => {
  it("reads an atom as one token from the next command on, not in its own declaration", () => {
    const context = 'notation "+1a" => (0 : Nat) + 1a\ndef x := +1a';
    expect(texts(context)).toEqual(["notation", '"+1a"', "=>", "(", "0", ":", "Nat", ")", "+", "1", "a", "def", "x", ":=", "+1a"]);
  });

  it("takes the atoms of every declaring command, trimmed, before its `=>` only", () => {
    const context = [
      'infixl:65 " +ᵥ " => HAdd.hAdd',
      'notation:50 a " ≡ " b " [MOD " n "]" => Nat.ModEq n a b',
      'notation "⊕a" => "not an atom"',
      'local notation "⊕a" => 1',
      'prefix:max "√√" => Nat.sqrt',
    ].join("\n");
    const { atoms, refusal } = readDeclaringAtoms(context, BUILTIN_TABLE, "context");
    expect(refusal).toBeUndefined();
    expect(atoms.map((declared) => declared.atom)).toEqual(["+ᵥ", "≡", "[MOD", "]", "⊕a", "⊕a", "√√"]);
  });

  it("still collects a declaration's atoms after one that declared nothing new", () => {
    const context = 'notation "⊕a" => 1\nnotation "⊕a" => 2\nnotation "⊕b" => 3\ndef y := ⊕b';
    expect(texts(context).at(-1)).toBe("⊕b");
  });

  it("matches the longest atom, as Lean's token function does", () => {
    const context = 'notation "⊕" => 1\nnotation "⊕⊕" => 2\ndef y := ⊕⊕⊕';
    expect(texts(context).slice(-2)).toEqual(["⊕⊕", "⊕"]);
  });

  it("reads the text without its atoms as well, and refuses where the two readings put a literal differently", () => {
    const context = 'notation "+1a" => (0 : Nat)\ndef x : Nat := +1a\'"\'\n#eval 1\n-- "';
    const { declared, plain, refusal } = readDeclaringAtoms(context, BUILTIN_TABLE, "context");
    expect(declared.tokens.some((token) => token.text === "#eval")).toBe(true);
    expect(plain.tokens.some((token) => token.text === "#eval")).toBe(false);
    expect(refusal?.reason).toMatch(/^the context reads differently at context 2:18 with the tokens its notation declares \(`\+1a`\)/);
  });

  it("refuses an atom it cannot model, naming it", () => {
    const { refusal } = readDeclaringAtoms('notation "{x" => 1', BUILTIN_TABLE, "context");
    expect(refusal?.reason).toMatch(/^the notation at context 1:9 declares the token "\{x", which holds `\{`/);
  });
});

describe("tablesAfterContext and withAtoms", () => {
  it("read the statement and proof with the context's atoms, and without them", () => {
    const [withThem, without] = tablesAfterContext('notation "+1a" => 0', BUILTIN_TABLE);
    expect(without).toBe(BUILTIN_TABLE);
    expect(tokenize("+1a'x'", { tokens: withThem }).tokens.map((token) => token.kind)).toEqual(["symbol", "char"]);
    expect(tablesAfterContext("def x := 1", BUILTIN_TABLE)).toEqual([BUILTIN_TABLE]);
  });

  it("withAtoms keeps the table's own tokens and source, and the longer match wins", () => {
    const table = withAtoms(BUILTIN_TABLE, [":=>"]);
    expect(table.source).toBe("builtin");
    expect(table.has(":=") && table.has(":=>")).toBe(true);
    expect(table.longestMatch("a :=> b", 2)).toBe(":=>");
    expect(table.longestMatch("a := b", 2)).toBe(":=");
    expect(withAtoms(BUILTIN_TABLE, [":="])).toBe(BUILTIN_TABLE);
  });
});
