import { describe, expect, it } from "vitest";
import { HONEST_WHOLE_FILES, WHOLE_FILE_ATTACKS, WHOLE_FILE_THEOREM } from "../../../../tests/security/whole-file-attacks.js";
import { readsAsWholeFile } from "./proof-format.js";
import { splitWholeFile, type WholeFileTarget } from "./split-whole-file.js";

const target: WholeFileTarget = { ...WHOLE_FILE_THEOREM, context: "" };

describe("splitWholeFile", () => {
  it("takes the issue's file apart: the lemma as the auxiliaries, the theorem's body", () => {
    const split = splitWholeFile(HONEST_WHOLE_FILES["a lemma, then the theorem (the issue's example)"]!, target);
    expect(split).toEqual({
      ok: true,
      value: {
        auxiliaries: "lemma aux_wf (n : Nat) : n + 0 = n := by simp",
        body: "by\n  exact aux_wf n",
        auxiliaryNames: ["aux_wf"],
        dropped: [],
      },
    });
  });

  it.each(Object.entries(HONEST_WHOLE_FILES))("accepts %s", (_name, file) => {
    const split = splitWholeFile(file, target);
    expect(split.ok, split.ok ? "" : split.reason).toBe(true);
  });

  it("drops a preamble the header already has, and keeps comments out of what Lean is sent", () => {
    const split = splitWholeFile(HONEST_WHOLE_FILES["the imports the header has, a doc comment, and `lemma` for the theorem"]!, target);
    expect(split.ok && split.value.dropped).toEqual(["import Mathlib"]);
    expect(split.ok && split.value.auxiliaries).not.toContain("helper");
  });

  it("drops opens and set_options the header has, and refuses an import it has not", () => {
    const header = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 0\nopen BigOperators Real Nat Topology Rat";
    const file = `import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n\n${WHOLE_FILE_THEOREM.statement} := by simp`;
    const split = splitWholeFile(file, { ...target, header });
    expect(split.ok && split.value.dropped).toHaveLength(4);
    const refused = splitWholeFile(`import Lean\n${WHOLE_FILE_THEOREM.statement} := by simp`, target);
    expect(refused.ok || refused.reason).toMatch(/imports `Lean`, which the theorem's header does not import/);
  });

  it.each(Object.entries(WHOLE_FILE_ATTACKS))("refuses %s", (_name, { file, reason }) => {
    const split = splitWholeFile(file, target);
    expect(split.ok).toBe(false);
    expect(split.ok || split.reason).toMatch(reason);
  });

  it("compares the statement token by token: whitespace and comments do not count, a changed type does", () => {
    const spaced = `theorem   add_zero_wf\n  (n : Nat) -- n\n  : n + 0 = n := by simp`;
    expect(splitWholeFile(spaced, target).ok).toBe(true);
    const other = splitWholeFile("theorem add_zero_wf (n : Int) : n + 0 = n := by simp", target);
    expect(other.ok || other.reason).toMatch(/at file 1:25 it has `Int` where the dataset's has `Nat`/);
    const shorter = splitWholeFile("theorem add_zero_wf (n : Nat) : n + 0 := by simp", target);
    expect(shorter.ok || shorter.reason).toMatch(/has `:=` where the dataset's has `=`|it has `\(the end of the statement\)`/);
  });
});

describe("readsAsWholeFile", () => {
  it("reads a body as a body and a file as a file under auto; the fixed formats decide alone", () => {
    expect(readsAsWholeFile("by simp", "auto")).toBe(false);
    expect(readsAsWholeFile(":= by simp", "auto")).toBe(false);
    expect(readsAsWholeFile("-- a comment\nlemma x : True := trivial\ntheorem t : True := x", "auto")).toBe(true);
    expect(readsAsWholeFile("import Mathlib\ntheorem t : True := trivial", "auto")).toBe(true);
    expect(readsAsWholeFile("@[simp] lemma x : True := trivial", "auto")).toBe(true);
    expect(readsAsWholeFile("theorem t : True := trivial", "body")).toBe(false);
    expect(readsAsWholeFile("by simp", "whole_file")).toBe(true);
  });
});
