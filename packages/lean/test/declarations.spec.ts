import { describe, expect, it } from "vitest";
import {
  codeTokens,
  declaredTheoremName,
  nextCommandAtLineStart,
  statementWithoutProof,
  theoremDeclarations,
  topLevelAssign,
} from "../src/index.js";

describe("declarations from tokens", () => {
  it("names the theorem a statement declares, after attributes and modifiers", () => {
    expect(declaredTheoremName("theorem foo (n : ℕ) : n = n")).toBe("foo");
    expect(declaredTheoremName("@[simp] @[norm_cast] private theorem Nat.foo' : True")).toBe("Nat.foo'");
    expect(declaredTheoremName("lemma «my thm» : True")).toBe("«my thm»");
    expect(declaredTheoremName("/- doc -/ theorem x : True")).toBe("x");
    expect(declaredTheoremName("def f := 1")).toBeUndefined();
    expect(declaredTheoremName("example : True")).toBeUndefined();
    // A name in a comment or a string is no declaration.
    expect(declaredTheoremName('-- theorem fake\n"theorem fake2"')).toBeUndefined();
  });

  it("finds the first := outside brackets (binder defaults are inside)", () => {
    const tokens = codeTokens("theorem t (n : ℕ := 0) {m : ℕ} : n + m = m + n := by omega");
    const at = topLevelAssign(tokens, 0);
    expect(tokens[at + 1]?.text).toBe("by");
    expect(topLevelAssign(codeTokens("theorem t : True"), 0)).toBe(-1);
  });

  it("finds the next command only where it starts a line, so `open … in` inside a proof does not end it", () => {
    const source = "theorem a : True := by\n  open Nat in trivial\ntheorem b : True := trivial";
    const tokens = codeTokens(source);
    const next = nextCommandAtLineStart(source, tokens, 1);
    expect(tokens[next]?.text).toBe("theorem");
    expect(tokens[next]!.start).toBe(source.lastIndexOf("theorem"));
    expect(theoremDeclarations(tokens).map((d) => d.name)).toEqual(["a", "b"]);
  });

  it("strips only a placeholder proof from a statement", () => {
    expect(statementWithoutProof("theorem t : True := by sorry")).toBe("theorem t : True");
    expect(statementWithoutProof("theorem t : True := by\n  sorry -- todo")).toBe("theorem t : True");
    expect(statementWithoutProof("theorem t : True :=")).toBe("theorem t : True");
    expect(statementWithoutProof("theorem t : True := by")).toBe("theorem t : True");
    expect(statementWithoutProof("theorem t : True := trivial")).toBe("theorem t : True := trivial");
    expect(statementWithoutProof("theorem t (h : sorry_lemma) : True")).toBe("theorem t (h : sorry_lemma) : True");
  });
});
