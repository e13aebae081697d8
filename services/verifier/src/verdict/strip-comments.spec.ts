import { describe, expect, it } from "vitest";
import { stripLeanComments } from "./strip-comments.js";

describe("stripLeanComments", () => {
  it("blanks line comments and keeps the newline", () => {
    expect(stripLeanComments("by simp -- sorry\n  rfl")).toBe("by simp         \n  rfl");
  });

  it("blanks nested block comments across lines, keeping every line and column", () => {
    const source = "by\n  /- outer /- inner sorry -/\n still -/ simp";
    const stripped = stripLeanComments(source);
    expect(stripped).toBe(`by\n${" ".repeat(28)}\n${" ".repeat(10)}simp`);
    expect(stripped.split("\n").map((line) => line.length)).toEqual(source.split("\n").map((line) => line.length));
  });

  it("blanks doc comments", () => {
    expect(stripLeanComments("/-- doc sorry -/ theorem x")).toBe("                 theorem x");
  });

  it("keeps one space per code point, so columns in code points do not move", () => {
    const stripped = stripLeanComments("/- 𝔽 ∀ -/x");
    expect(Array.from(stripped)).toHaveLength(Array.from("/- 𝔽 ∀ -/x").length);
    expect(stripped.endsWith("x")).toBe(true);
  });

  it("does not start comments inside strings, char literals, raw strings or «identifiers»", () => {
    for (const code of [
      'trace "-- not a comment" ; sorry',
      'trace "/- not a comment" ; sorry',
      'trace "esc \\" -- still string" ; sorry',
      "exact '-' ; sorry",
      "exact '\\\\' ; sorry",
      'trace r"-- raw" ; sorry',
      'trace r#"a " -- b"# ; sorry',
      "exact «x -- y» ; sorry",
    ]) {
      expect(stripLeanComments(code), code).toBe(code);
    }
  });

  it("treats a quote after an identifier as part of the name, not a char literal", () => {
    expect(stripLeanComments("exact h' -- c")).toBe("exact h'     ");
  });

  it("blanks an unterminated block comment to the end", () => {
    expect(stripLeanComments("simp /- open")).toBe("simp        ");
  });

  it("leaves comment-free code unchanged", () => {
    const code = "theorem t (n : ℕ) : n + 0 = n := by\n  induction n with\n  | zero => rfl\n  | succ n ih => simp";
    expect(stripLeanComments(code)).toBe(code);
  });
});
