// Lexing against a token table, as Lean's tokenFn does: longest match, after
// strings, character literals, numerals, name literals and raw strings; an
// identifier wins only when longer than the token at its start.
import { describe, expect, it } from "vitest";
import { BUILTIN_TABLE, commandStartedBy, makeTokenTable, tokenize, type LeanToken, type TokenTable } from "../src/index.js";

const kinds = (tokens: LeanToken[]) => tokens.map((t) => `${t.kind}:${t.text}`);
const lex = (source: string, tokens: TokenTable = BUILTIN_TABLE) => {
  const result = tokenize(source, { tokens });
  expect(result.error, source).toBeUndefined();
  return kinds(result.tokens);
};

/** A small stand-in for an environment's table (what the verifier reads from Lean for a Mathlib header). */
const mathlibLike = makeTokenTable(
  [
    "#",
    "#eval",
    "#check",
    "''",
    "⁻¹",
    "⁻¹'",
    "×ˢ",
    "∑",
    "∑'",
    "∈",
    "‖",
    ",",
    "(",
    ")",
    ":=",
    "fun",
    "↦",
    "Type*",
    "ℝ≥0",
    "by",
    "module",
    "theorem",
    "x'ᵀ",
  ],
  ["#eval", "#check", "theorem", "@["],
  "environment",
);

describe("longest match against the table", () => {
  it("reads quote-ended symbols as one token, so their quote opens no character literal", () => {
    for (const table of [BUILTIN_TABLE, mathlibLike]) {
      expect(lex("f ⁻¹' s", table)).toEqual(["identifier:f", "symbol:⁻¹'", "identifier:s"]);
      expect(lex("f '' s", table)).toEqual(["identifier:f", "symbol:''", "identifier:s"]);
      expect(lex("∑' i, f i", table)).toEqual(["symbol:∑'", "identifier:i", "symbol:,", "identifier:f", "identifier:i"]);
      expect(lex("s ×ˢ t", table)).toEqual(["identifier:s", "symbol:×ˢ", "identifier:t"]);
    }
  });

  it("hides nothing behind a quote that the table reads as code: a symbol the table lacks leaves a char literal", () => {
    // With `⁻¹'` missing from the table, Lean reads `'` as the start of a character literal, and so does the lexer.
    const bare = makeTokenTable(["⁻¹"], [], "environment");
    expect(tokenize("f ⁻¹' s", { tokens: bare }).error?.message).toBe("missing end of character literal");
  });

  it("lets a token win over an identifier of the same or shorter length, and an identifier win when longer", () => {
    expect(lex("(α : Type*)", mathlibLike)).toEqual(["symbol:(", "identifier:α", "symbol::", "symbol:Type*", "symbol:)"]);
    expect(lex("x : ℝ≥0", mathlibLike)).toEqual(["identifier:x", "symbol::", "symbol:ℝ≥0"]);
    expect(lex("fun x ↦ funny", mathlibLike)).toEqual(["identifier:fun", "identifier:x", "symbol:↦", "identifier:funny"]);
    expect(lex("h' x'", mathlibLike)).toEqual(["identifier:h'", "identifier:x'"]);
  });

  it("on an environment's table reads `#s` as `#` then `s`, and `#eval` as one command token", () => {
    expect(lex("#s = 3", mathlibLike).slice(0, 2)).toEqual(["symbol:#", "identifier:s"]);
    expect(lex("h#eval 1", mathlibLike)).toEqual(["identifier:h", "hashCommand:#eval", "number:1"]);
    expect(lex("#evalx", mathlibLike)).toEqual(["hashCommand:#eval", "identifier:x"]);
  });

  it("on the fallback table takes every `#word` for a command, since it may miss Mathlib's", () => {
    expect(lex("#s = 3").slice(0, 1)).toEqual(["hashCommand:#s"]);
    expect(lex("h#find x")[1]).toBe("hashCommand:#find");
  });
});

describe("command starts", () => {
  const first = (source: string, table: TokenTable) => tokenize(source, { tokens: table }).tokens[0]!;

  it("come from the environment's command category beside the built-in list", () => {
    const withMathlibCommand = makeTokenTable(["assert_not_exists", "count_heartbeats", "in"], ["count_heartbeats"], "environment");
    expect(commandStartedBy(first("count_heartbeats in", withMathlibCommand), withMathlibCommand)).toBe("count_heartbeats");
    expect(commandStartedBy(first("count_heartbeats in", BUILTIN_TABLE), BUILTIN_TABLE)).toBeUndefined();
    expect(commandStartedBy(first("theorem x", mathlibLike), mathlibLike)).toBe("theorem");
  });

  it("never include the file-header words, which Mathlib's `module` tactic shares", () => {
    for (const table of [BUILTIN_TABLE, mathlibLike]) {
      expect(commandStartedBy(first("module", table), table)).toBeUndefined();
    }
  });
});
