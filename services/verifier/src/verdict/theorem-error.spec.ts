import { describe, expect, it } from "vitest";
import type { ReplMessage } from "../repl/protocol.js";
import type { CheckedSource } from "./checked-source.js";
import { prepareProof } from "./proof-source.js";
import { theoremErrorIn } from "./theorem-error.js";
import type { TheoremTarget } from "./theorem-target.js";

// Positions as Lean reports them for the checked source: 1-based lines, 0-based columns.
const error = (line: number, column: number, data: string): ReplMessage => ({ severity: "error", pos: { line, column }, data });

const target: TheoremTarget = {
  header: "",
  name: "even_sq",
  // Line 2 of the checked source; `Even` starts at column 31, the proof at column 57.
  statement: "theorem even_sq (n : Nat) (h : Even n) : Even (n * n)",
  context: "open Nat",
  fullName: "even_sq",
};

function checked(proof: string, theorem: TheoremTarget = target): CheckedSource {
  const prepared = prepareProof(theorem, proof);
  if (!prepared.ok) throw new Error(prepared.reason);
  return prepared.value;
}

describe("theoremErrorIn", () => {
  it("blames the theorem for an error inside its statement: no proof can fix it", () => {
    const source = checked("by simp");
    expect(source.text.split("\n")[1]?.indexOf("Even")).toBe(31);
    const messages = [error(2, 31, "unknown identifier 'Even'\nmore"), error(2, 64, "unsolved goals\n⊢ False")];
    expect(theoremErrorIn(messages, source)).toBe("2:31: unknown identifier 'Even'");
  });

  it("blames the theorem for an error in its context, and names the first error", () => {
    const source = checked("by simp");
    const messages = [error(2, 40, "unknown identifier 'Even'"), error(1, 5, "unknown namespace 'Nat'")];
    expect(theoremErrorIn(messages, source)).toBe("1:5: unknown namespace 'Nat'");
  });

  it("leaves the proof's errors, unsolved goals, warnings and kernel errors to the verdict", () => {
    const source = checked("by\n  exact foo");
    expect(
      theoremErrorIn(
        [
          error(3, 8, "unknown identifier 'foo'"),
          error(2, 68, "unsolved goals\n⊢ Even (n * n)"),
          { severity: "warning", pos: { line: 2, column: 40 }, data: "unused variable `h`" },
          // Reported at the declaration's keyword or name, whatever the cause: the proof's failures among them.
          error(2, 0, "(kernel) declaration has metavariables 'even_sq'"),
          error(2, 0, "some error at the declaration"),
          error(2, 8, "fail to show termination for\n  even_sq"),
          error(2, 14, "an error at the name's last letter"),
        ],
        source,
      ),
    ).toBeUndefined();
  });

  it("in a whole file, blames the dataset's context but not a statement read after the model's auxiliaries", () => {
    const file = "def Even' (n : Nat) : Prop := n % 2 = 0\n\ntheorem even_sq (n : Nat) (h : Even n) : Even (n * n) := by\n  simp";
    const source = checked(file, { ...target, proofFormat: "whole_file" });
    expect(source.theorem.statementFollowsModelText).toBe(true);
    const statementLine = source.text.split("\n").findIndex((line) => line.startsWith("theorem even_sq")) + 1;
    // The statement's error may come from the auxiliaries (a shadowed name, an instance): it stays the model's.
    expect(theoremErrorIn([error(statementLine, 31, "unknown identifier 'Even'")], source)).toBeUndefined();
    // An error in an auxiliary is the model's too.
    expect(theoremErrorIn([error(2, 4, "unknown identifier 'Even''")], source)).toBeUndefined();
    // The dataset's context comes before anything the model wrote.
    expect(theoremErrorIn([error(1, 5, "unknown namespace 'Nat'")], source)).toBe("1:5: unknown namespace 'Nat'");
  });

  it("in a whole file without auxiliaries, reads the statement as the dataset's", () => {
    const source = checked("theorem even_sq (n : Nat) (h : Even n) : Even (n * n) := by simp", { ...target, proofFormat: "whole_file" });
    expect(source.theorem.statementFollowsModelText).toBe(false);
    expect(theoremErrorIn([error(2, 31, "unknown identifier 'Even'")], source)).toBe("2:31: unknown identifier 'Even'");
  });
});
