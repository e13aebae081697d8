import { describe, expect, it } from "vitest";
import { blankNonCode } from "../src/lean/lean-source.js";
import { extractProof } from "../src/lean/extract-proof.js";
import { reliedOnIdentifiers } from "../src/lean/tactic-uses.js";

const body = (text: string, name = "foo") => extractProof(text, name)?.body;

describe("extractProof", () => {
  it("takes the body after := of the theorem in the last Lean block, after the thinking", () => {
    const text = [
      "<think>```lean\ntheorem foo : 1 = 1 := by sorry\n```</think>",
      "Here:",
      "```lean\nimport Mathlib\n\ntheorem foo (n : ℕ) : n + 0 = n := by\n  simp\n```",
    ].join("\n");
    expect(body(text)).toBe("by\n  simp");
  });

  it("picks the declaration named like the theorem, and stops at the next command", () => {
    const code = "```lean4\nlemma helper : True := trivial\n\ntheorem foo : True := by\n  exact helper\n\n#eval 1\n```";
    expect(body(code)).toBe("by\n  exact helper");
    expect(body("```lean\ntheorem bar : True := by trivial\n```")).toBe("by trivial");
  });

  it("takes the whole file, auxiliaries included, for a whole-file theorem (or auto and a file)", () => {
    const file = "lemma aux_wf (n : Nat) : n + 0 = n := by simp\n\ntheorem foo (n : Nat) : n + 0 = n := by\n  exact aux_wf n";
    const completion = `<think>first a lemma</think>\n\`\`\`lean4\n${file}\n\`\`\``;
    // The body format drops the lemma (the finding): the body alone, as before.
    expect(extractProof(completion, "foo")).toMatchObject({ body: "by\n  exact aux_wf n", wholeFile: false });
    for (const format of ["whole_file", "auto"] as const) {
      expect(extractProof(completion, "foo", format)).toMatchObject({ body: file, wholeFile: true });
    }
    // auto reads a body as a body.
    expect(extractProof("```lean\nby simp\n```", "foo", "auto")).toMatchObject({ body: "by simp", wholeFile: false });
  });

  it("skips := inside binders and comments", () => {
    expect(body("```lean\ntheorem foo (n : ℕ := 0) /- := no -/ : n = n := rfl\n```")).toBe("rfl");
  });

  it("puts bare tactics under by, re-indented", () => {
    expect(body("  intro n\n  simp")).toBe("by\n  intro n\n  simp");
    expect(body(":= by omega")).toBe("by omega");
    expect(body("```lean\nomega\n```")).toBe("by\n  omega");
  });

  it("finds nothing in unfinished thinking, comments only, or an empty body", () => {
    expect(extractProof("<think>let me see", "foo")).toBeUndefined();
    expect(extractProof("```lean\n-- simp\n/- ring -/\n```", "foo")).toBeUndefined();
    expect(extractProof("```lean\ntheorem foo : True := by\n```", "foo")).toBeUndefined();
    expect(extractProof("<think>x</think>   ", "foo")).toBeUndefined();
  });

  it("keeps a truncated last block", () => {
    expect(body("```lean\ntheorem foo : True := by\n  trivi")).toBe("by\n  trivi");
  });

  it("blanks comments in the code it hands scorers", () => {
    expect(extractProof("```lean\ntheorem foo : True := by -- ring\n  trivial\n```", "foo")?.code).toBe("by        \n  trivial");
  });
});

describe("blankNonCode", () => {
  it("blanks line, nested block and doc comments, strings and char literals, keeping layout", () => {
    const source = "a -- b\n/- c /- d -/ e -/ f\n/-- g -/ \"h \\\" i\" 'j' k' x'";
    const blanked = blankNonCode(source);
    expect(blanked.length).toBe(source.length);
    expect(blanked.split("\n").length).toBe(3);
    expect(blanked.replace(/\s+/g, " ").trim()).toBe("a f k' x'");
  });
});

describe("reliedOnIdentifiers", () => {
  it("leaves out what follows try/repeat/first and lines deeper than them", () => {
    const names = reliedOnIdentifiers(
      "by\n  nlinarith [sq_nonneg x]\n  try ring\n  repeat\n    omega\n  · first | decide | simp\n  exact h",
    );
    expect([...names].sort()).toEqual(["by", "exact", "h", "nlinarith", "sq_nonneg", "x"]);
  });
});
