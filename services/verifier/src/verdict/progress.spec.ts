import { describe, expect, it } from "vitest";
import type { CommandResponse, ReplMessage, ReplTactic } from "../repl/protocol.js";
import { goalsOf, isSorryWarning, progressOf, remainingGoals } from "./progress.js";

const at = (line: number, column: number) => ({ line, column });
const tactic = (text: string, pos: [number, number], endPos: [number, number]): ReplTactic => ({
  tactic: text,
  proofState: 0,
  pos: at(...pos),
  endPos: at(...endPos),
  goals: "⊢ True",
});

// From transcript mathlib/H20231115_3.
const unsolved: ReplMessage = {
  severity: "error",
  pos: at(1, 33),
  endPos: at(2, 24),
  data: "unsolved goals\ncase zero\n⊢ 0 + 1 > 0\n\ncase succ\nx : Nat\nhx : x + 1 > x\n⊢ x + 1 + 1 > x + 1",
};

describe("goals", () => {
  it("splits an unsolved-goals error into its goals", () => {
    expect(goalsOf(unsolved)).toEqual(["case zero\n⊢ 0 + 1 > 0", "case succ\nx : Nat\nhx : x + 1 > x\n⊢ x + 1 + 1 > x + 1"]);
  });

  it("counts the goals sorries stand for", () => {
    const goals = remainingGoals([unsolved], [{ proofState: 0, goal: "⊢ Nat" }]);
    expect(goals).toHaveLength(3);
    expect(goals[2]).toBe("⊢ Nat");
  });

  it("recognises the sorry warning in the old and the new wording", () => {
    const warning = (data: string): ReplMessage => ({ severity: "warning", pos: at(1, 0), data });
    expect(isSorryWarning(warning("declaration uses `sorry`"))).toBe(true);
    expect(isSorryWarning(warning("declaration uses 'sorry'"))).toBe(true);
    expect(isSorryWarning(warning("unused variable"))).toBe(false);
  });
});

describe("progressOf", () => {
  const proofStart = at(2, 0);

  it("counts the proof's tactics that ended before the first error", () => {
    const response: CommandResponse = {
      env: 1,
      tactics: [
        tactic("simp at h", [1, 40], [1, 49]), // in the context's helper: not the proof's
        tactic("intro x", [2, 2], [2, 9]),
        tactic("have h2 : x = x := by\n    rfl", [3, 2], [4, 7]),
        tactic("rfl", [4, 4], [4, 7]),
        tactic("linarith", [5, 2], [5, 10]),
        tactic("simp", [6, 2], [6, 6]),
      ],
      messages: [{ severity: "error", pos: at(5, 2), endPos: at(5, 10), data: "linarith failed" }],
    };
    // The goal linarith failed on was admitted by Lean's error recovery: a goal left.
    expect(progressOf(response, proofStart)).toEqual({
      tacticsTotal: 5,
      tacticsValidBeforeFirstError: 3,
      goalsRemaining: 1,
      errorCount: 1,
    });
  });

  it("counts the goals an error closed as goals left, from the innermost tactic holding it", () => {
    // `constructor` makes 3 goals, `· simp` closes one, `all_goals exact junk` fails on the other two.
    const response: CommandResponse = {
      env: 1,
      tactics: [
        { ...tactic("constructor", [2, 2], [2, 13]), goals: "⊢ a ∧ b ∧ c" },
        { ...tactic("· simp", [3, 2], [3, 8]), goals: "case left\n⊢ a\n\ncase right\n⊢ b ∧ c" },
        { ...tactic("all_goals exact junk", [4, 2], [4, 22]), goals: "case right.left\n⊢ b\n\ncase right.right\n⊢ c" },
        { ...tactic("exact junk", [4, 12], [4, 22]), goals: "case right.left\n⊢ b" },
      ],
      messages: [
        { severity: "error", pos: at(4, 18), endPos: at(4, 22), data: "unknown identifier 'junk'" },
        { severity: "error", pos: at(4, 18), endPos: at(4, 22), data: "unknown identifier 'junk'" },
      ],
    };
    expect(progressOf(response, proofStart).goalsRemaining).toBe(1);
    const outer = { ...response, tactics: response.tactics!.slice(0, 3) };
    expect(progressOf(outer, proofStart).goalsRemaining).toBe(2);
    // Leaving the same two goals open honestly counts the same two goals.
    const open: CommandResponse = {
      env: 1,
      tactics: response.tactics!.slice(0, 2),
      messages: [{ ...unsolved, data: "unsolved goals\n⊢ b\n\n⊢ c" }],
    };
    expect(progressOf(open, proofStart).goalsRemaining).toBe(2);
  });

  it("counts every tactic as valid when only unsolved goals remain at the end of the block", () => {
    const response: CommandResponse = { env: 1, tactics: [tactic("induction' x with x hx", [2, 2], [2, 24])], messages: [unsolved] };
    expect(progressOf(response, at(1, 30))).toEqual({ tacticsTotal: 1, tacticsValidBeforeFirstError: 1, goalsRemaining: 2, errorCount: 1 });
  });

  it("counts all tactics without an error", () => {
    const response: CommandResponse = { env: 1, tactics: [tactic("simp", [2, 2], [2, 6])] };
    expect(progressOf(response, proofStart)).toEqual({
      tacticsTotal: 1,
      tacticsValidBeforeFirstError: 1,
      goalsRemaining: 0,
      errorCount: 0,
    });
  });
});
