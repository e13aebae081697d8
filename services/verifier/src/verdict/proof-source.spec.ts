import { describe, expect, it } from "vitest";
import { prepareProof, prepareProofStart, prepareTactic } from "./proof-source.js";
import type { TheoremTarget } from "./theorem-target.js";

const target: TheoremTarget = {
  header: "import Mathlib",
  name: "t",
  statement: "theorem t (n : ℕ) : n + 0 = n",
  context: "",
  fullName: "t",
};

describe("prepareProof", () => {
  it("joins the proof body to the statement with :=", () => {
    const prepared = prepareProof(target, "by simp");
    expect(prepared).toEqual({
      ok: true,
      value: {
        text: "theorem t (n : ℕ) : n + 0 = n := by simp",
        proofStart: { line: 1, column: 33 },
        theorem: { contextEnd: { line: 1, column: 0 }, signatureStart: { line: 1, column: 9 }, statementFollowsModelText: false },
      },
    });
  });

  it("accepts a leading := and drops comments, keeping the proof's lines", () => {
    const prepared = prepareProof(target, "  := by -- the easy way\n  simp");
    expect(prepared.ok && prepared.value.text).toBe("theorem t (n : ℕ) : n + 0 = n := by                \n  simp");
  });

  it("puts the context first and counts the proof's start after it", () => {
    const prepared = prepareProof({ ...target, context: "open Nat\nvariable (m : ℕ)" }, "by simp");
    expect(prepared.ok && prepared.value).toEqual({
      text: "open Nat\nvariable (m : ℕ)\ntheorem t (n : ℕ) : n + 0 = n := by simp",
      proofStart: { line: 3, column: 33 },
      theorem: { contextEnd: { line: 3, column: 0 }, signatureStart: { line: 3, column: 9 }, statementFollowsModelText: false },
    });
  });

  it("reads CRLF as LF, as Lean does, and sends Lean the LF text it screened", () => {
    const prepared = prepareProof(target, 'by\r\n  have := "x\\\r\n    y"\r\n  simp\r\n');
    expect(prepared.ok && prepared.value.text).toBe('theorem t (n : ℕ) : n + 0 = n := by\n  have := "x\\\n    y"\n  simp');
    expect(prepareTactic("simp\r\n  <;> rfl", "t")).toEqual({ ok: true, value: "simp\n  <;> rfl" });
  });

  it("refuses a string gap Lean would stop in, where it reads the rest of the string as code", () => {
    const prepared = prepareProof(target, 'by\n  have := "x\\\n\n#eval 1"\n  simp');
    expect(!prepared.ok && prepared.reason).toBe(
      "the proof does not lex as Lean: unexpected additional newline in string gap at proof 3:0",
    );
  });

  it("refuses a comment that never closes, as Lean does, rather than send Lean what precedes it", () => {
    for (const proof of ["by simp /- and then\n#eval 1", "by\n  simp\n  /- a /- b -/ sorry"]) {
      const prepared = prepareProof(target, proof);
      expect(prepared.ok, proof).toBe(false);
      expect(!prepared.ok && prepared.reason, proof).toMatch(/^the proof does not lex as Lean: unterminated comment at proof \d+:\d+$/u);
    }
    expect(prepareTactic("simp /- no end", "t")).toEqual({
      ok: false,
      reason: "the tactic does not lex as Lean: unterminated comment at tactic 1:5",
    });
    expect(prepareProof(target, "by simp /- a /- b -/ c -/").ok).toBe(true);
  });

  it("refuses a banned construct, naming it and its line:column in the proof", () => {
    expect(prepareProof(target, "by\n  -- sorry in a comment is fine\n  exact sorry")).toEqual({
      ok: false,
      reason: "banned `sorry` at proof 3:8: it leaves the goal unproved",
    });
  });

  it("names the matched text when it differs from the entry's name", () => {
    const prepared = prepareProof(target, "by\n  set_option debug.skipKernelTC true in simp");
    expect(prepared.ok === false && prepared.reason).toBe(
      "banned set_option debug.*/kernel.* (`set_option debug.skipKernelTC`) at proof 2:2: it switches off kernel checking (debug.skipKernelTC) or compiler guarantees",
    );
  });

  it("refuses a proof that does not lex as Lean, since Lean re-reads it from the next character", () => {
    for (const [proof, message] of [
      ['by exact "never closed #eval', "unterminated string literal at proof 1:9"],
      ["by exact 'ab' theorem", "missing end of character literal at proof 1:11"],
      ['by exact "\\q"', "invalid escape sequence"],
      ["by exact «never closed", "unterminated identifier escape"],
    ]) {
      const prepared = prepareProof(target, proof!);
      expect(prepared.ok === false && prepared.reason, proof).toContain(`the proof does not lex as Lean: ${message}`);
    }
  });

  it("refuses a banned construct in the context or the statement", () => {
    const inContext = prepareProof({ ...target, context: "axiom cheat : False" }, "by simp");
    expect(inContext.ok === false && inContext.reason).toMatch(/^banned `axiom` at context 1:0/);
    const inStatement = prepareProof({ ...target, statement: "theorem t (h : sorryAx Prop) : True" }, "trivial");
    expect(inStatement.ok === false && inStatement.reason).toMatch(/^banned `sorryAx` at statement 1:15/);
  });

  it("refuses a proof that is empty once comments are gone", () => {
    expect(prepareProof(target, ":= -- nothing\n /- here -/")).toEqual({
      ok: false,
      reason: "the proof is empty (after removing comments)",
    });
  });
});

describe("prepareProofStart", () => {
  it("closes the statement with by sorry and says where the REPL will report that sorry", () => {
    const prepared = prepareProofStart({ ...target, context: "open Nat" });
    expect(prepared.ok && prepared.value).toEqual({
      text: "open Nat\ntheorem t (n : ℕ) : n + 0 = n := by sorry",
      proofStart: { line: 2, column: 33 },
      theorem: { contextEnd: { line: 2, column: 0 }, signatureStart: { line: 2, column: 9 }, statementFollowsModelText: false },
      sorryAt: { line: 2, column: 36 },
    });
  });
});

describe("prepareTactic", () => {
  it("passes a tactic without comments and refuses banned ones", () => {
    expect(prepareTactic("  simp -- done\n", "t")).toEqual({ ok: true, value: "simp" });
    expect(prepareTactic("exact?", "t")).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^banned library search \(`exact\?`\) at tactic 1:0/),
    });
    expect(prepareTactic("-- nothing", "t")).toEqual({ ok: false, reason: "the tactic is empty (after removing comments)" });
  });
});
