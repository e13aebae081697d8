import { describe, expect, it } from "vitest";
import { TacticStatus } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ReplResponse } from "../repl/protocol.js";
import { readProofStart, readTacticOutcome } from "./tactic-outcome.js";

const step = (response: Extract<ReplResponse, { kind: "proofStep" }>["response"]): ReplResponse => ({ kind: "proofStep", response });

describe("readTacticOutcome", () => {
  it("COMPLETED only for proofStatus Completed", () => {
    expect(readTacticOutcome(step({ proofStatus: "Completed", proofState: 4, goals: [] }))).toEqual({
      status: TacticStatus.COMPLETED,
      proofState: 4,
      goals: [],
      messages: [],
    });
    // transcript app_type_mismatch: no goals, yet not a proof.
    expect(readTacticOutcome(step({ proofStatus: "Incomplete: contains metavariable(s)", proofState: 3, goals: [] })).status).toBe(
      TacticStatus.INCOMPLETE,
    );
  });

  it("never COMPLETED when a sorry closed the goals, whatever the REPL's version says", () => {
    // A REPL before proofStatus (PR #63) answers `stop` / `all_goals sorry` with no goals and the sorries.
    const sorry = { proofState: 3, goal: "⊢ x = x" };
    expect(readTacticOutcome(step({ proofState: 3, goals: [], sorries: [sorry] })).status).toBe(TacticStatus.INCOMPLETE);
    const warning = { severity: "warning" as const, pos: { line: 1, column: 0 }, data: "declaration uses 'sorry'" };
    expect(readTacticOutcome(step({ proofState: 3, goals: [], messages: [warning] })).status).toBe(TacticStatus.INCOMPLETE);
    expect(readTacticOutcome(step({ proofStatus: "Completed", proofState: 3, goals: [], sorries: [sorry] })).status).toBe(
      TacticStatus.INCOMPLETE,
    );
    // transcript tactic_mode_sorry: the newer REPL says so itself.
    expect(readTacticOutcome(step({ proofStatus: "Incomplete: contains sorry", proofState: 4, goals: [], sorries: [sorry] })).status).toBe(
      TacticStatus.INCOMPLETE,
    );
    expect(readTacticOutcome(step({ proofState: 5, goals: [] })).status).toBe(TacticStatus.COMPLETED);
  });

  it("INCOMPLETE with the new state and its goals", () => {
    expect(readTacticOutcome(step({ proofStatus: "Incomplete: open goals remain", proofState: 1, goals: ["⊢ Int"] }))).toEqual({
      status: TacticStatus.INCOMPLETE,
      proofState: 1,
      goals: ["⊢ Int"],
      messages: [],
    });
  });

  it("ERROR, with no new state, for a tactic that failed, an Error status or a REPL error", () => {
    // transcript mathlib/20240209: error recovery leaves no goals and "contains sorry".
    const failed = readTacticOutcome(
      step({
        proofStatus: "Incomplete: contains sorry",
        proofState: 1,
        goals: [],
        messages: [{ severity: "error", pos: { line: 0, column: 0 }, endPos: { line: 0, column: 0 }, data: "unsolved goals\n⊢ False" }],
      }),
    );
    expect(failed).toMatchObject({ status: TacticStatus.ERROR, proofState: undefined });
    expect(failed.messages[0]!.data).toBe("unsolved goals\n⊢ False");
    const kernel = readTacticOutcome(step({ proofStatus: "Error: kernel type check failed: x", proofState: 1, goals: [] }));
    expect(kernel).toMatchObject({ status: TacticStatus.ERROR, proofState: undefined });
    expect(kernel.messages.at(-1)!.data).toBe("Error: kernel type check failed: x");
    const unknown = readTacticOutcome({ kind: "error", response: { message: "Lean error:\n<input>:1:1: unknown tactic" } });
    expect(unknown).toEqual({
      status: TacticStatus.ERROR,
      proofState: undefined,
      goals: [],
      messages: [{ severity: "error", pos: { line: 0, column: 0 }, data: "Lean error:\n<input>:1:1: unknown tactic" }],
    });
  });

  it("falls back to the goals for REPLs that send no proofStatus", () => {
    expect(readTacticOutcome(step({ proofState: 2, goals: [] })).status).toBe(TacticStatus.COMPLETED);
    expect(readTacticOutcome(step({ proofState: 2, goals: ["⊢ True"] })).status).toBe(TacticStatus.INCOMPLETE);
  });
});

describe("readProofStart", () => {
  const sorryAt = { line: 1, column: 49 };

  it("takes the proof state of the service's own sorry and drops the sorry warning (transcript assumption_proof)", () => {
    const start = readProofStart(
      {
        kind: "command",
        response: {
          env: 0,
          sorries: [{ proofState: 0, pos: { line: 1, column: 49 }, endPos: { line: 1, column: 54 }, goal: "x : Nat\nh1 : x = 2\n⊢ x = 2" }],
          messages: [
            { severity: "warning", pos: { line: 1, column: 8 }, endPos: { line: 1, column: 10 }, data: "declaration uses `sorry`" },
          ],
        },
      },
      sorryAt,
    );
    expect(start).toEqual({ ok: true, proofState: 0, goals: ["x : Nat\nh1 : x = 2\n⊢ x = 2"], messages: [] });
  });

  it("fails when the statement has errors or the sorry is missing", () => {
    const broken = readProofStart(
      {
        kind: "command",
        response: { env: 0, messages: [{ severity: "error", pos: { line: 1, column: 7 }, data: "Unknown identifier `g`" }] },
      },
      sorryAt,
    );
    expect(broken).toMatchObject({ ok: false, reason: "the statement does not elaborate: Unknown identifier `g`" });
    expect(readProofStart({ kind: "command", response: { env: 0 } }, sorryAt)).toMatchObject({ ok: false });
    expect(readProofStart({ kind: "error", response: { message: "Unknown environment." } }, sorryAt)).toMatchObject({
      ok: false,
      reason: "the REPL did not elaborate the statement: Unknown environment.",
    });
  });
});
