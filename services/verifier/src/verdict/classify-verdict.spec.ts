// The verdict table: PROVED needs every condition; each failing condition gives
// its verdict and reason.
import { describe, expect, it } from "vitest";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { CommandResponse, ReplMessage, ReplResponse } from "../repl/protocol.js";
import { classifyProof, needsAxiomsCheck } from "./classify-verdict.js";

const at = (line: number, column: number) => ({ line, column });
const answerOn = (env: number, response: Omit<CommandResponse, "env">): ReplResponse => ({
  kind: "command",
  response: { env, ...response },
});
const command = (response: Omit<CommandResponse, "env">): ReplResponse => answerOn(1, response);
// The REPL numbers envs in order: the proof's answer is env 1, the axioms' env 2.
const axioms = (...names: string[]): ReplResponse =>
  answerOn(2, {
    messages: [
      {
        severity: "info",
        pos: at(1, 0),
        endPos: at(1, 6),
        data: names.length === 0 ? "'t' does not depend on any axioms" : `'t' depends on axioms: [${names.join(", ")}]`,
      },
    ],
  });
const error = (data: string, line = 1, column = 40): ReplMessage => ({
  severity: "error",
  pos: at(line, column),
  endPos: at(line, column + 4),
  data,
});
const report = (constant: string, ...used: string[]): ReplMessage => ({
  severity: "info",
  pos: at(1, 0),
  endPos: at(1, 6),
  data: used.length === 0 ? `'${constant}' does not depend on any axioms` : `'${constant}' depends on axioms: [${used.join(", ")}]`,
});
const sorryWarning: ReplMessage = { severity: "warning", pos: at(1, 8), endPos: at(1, 9), data: "declaration uses `sorry`" };

function judge(proof: ReplResponse, axiomsAnswer: ReplResponse | undefined) {
  return classifyProof({ proof, axioms: axiomsAnswer, theoremName: "t", fullName: "t", proofStart: at(1, 30) });
}

describe("classifyProof", () => {
  it("PROVED: no error, no sorry, the theorem present, standard axioms only", () => {
    for (const used of [[], ["propext"], ["Classical.choice", "propext", "Quot.sound"]]) {
      const judgement = judge(command({}), axioms(...used));
      expect(judgement).toMatchObject({ verdict: Verdict.PROVED, reason: "proved", axioms: used, goals: [] });
    }
  });

  it("ERROR: an error other than unsolved goals, reported with the first one's position", () => {
    const judgement = judge(command({ messages: [error("linarith failed\nmore", 3, 2), error("type mismatch", 2, 4)] }), undefined);
    expect(judgement.verdict).toBe(Verdict.ERROR);
    expect(judgement.reason).toBe("type mismatch (at 2:4)");
    expect(judgement.progress.errorCount).toBe(2);
  });

  it("INCOMPLETE: unsolved goals only", () => {
    const judgement = judge(command({ messages: [error("unsolved goals\n⊢ False\n\n⊢ True")] }), undefined);
    expect(judgement).toMatchObject({ verdict: Verdict.INCOMPLETE, reason: "unsolved goals (2 left)", goals: ["⊢ False", "⊢ True"] });
  });

  it("ERROR wins over unsolved goals", () => {
    const judgement = judge(command({ messages: [error("unsolved goals\n⊢ False"), error("unknown identifier 'x'")] }), undefined);
    expect(judgement.verdict).toBe(Verdict.ERROR);
  });

  it("INCOMPLETE: sorries, or Lean's sorry warning, even when the axioms look clean", () => {
    const withSorry = judge(
      command({ sorries: [{ proofState: 0, pos: at(1, 40), endPos: at(1, 45), goal: "⊢ False" }] }),
      axioms("sorryAx"),
    );
    expect(withSorry).toMatchObject({
      verdict: Verdict.INCOMPLETE,
      reason: "the proof contains sorry",
      goals: ["⊢ False"],
      axioms: ["sorryAx"],
    });
    const warned = judge(command({ messages: [sorryWarning] }), axioms());
    expect(warned).toMatchObject({ verdict: Verdict.INCOMPLETE, reason: "the proof contains sorry" });
  });

  it("INCOMPLETE: a clean elaboration whose theorem depends on sorryAx", () => {
    expect(judge(command({}), axioms("propext", "sorryAx"))).toMatchObject({
      verdict: Verdict.INCOMPLETE,
      reason: "the theorem depends on sorryAx",
    });
  });

  it("ERROR: non-standard axioms, native code included", () => {
    expect(judge(command({}), axioms("propext", "cheat"))).toMatchObject({
      verdict: Verdict.ERROR,
      reason: "the theorem depends on non-standard axioms: cheat",
    });
    expect(judge(command({}), axioms("Lean.ofReduceBool", "Lean.trustCompiler")).reason).toBe(
      "the theorem depends on non-standard axioms: Lean.ofReduceBool, Lean.trustCompiler",
    );
  });

  it("ERROR: the theorem is not in the environment (e.g. after #exit), or another constant was reported", () => {
    const missing = judge(command({}), answerOn(2, { messages: [error("Unknown constant `t`", 1, 14)] }));
    expect(missing).toMatchObject({
      verdict: Verdict.ERROR,
      reason: "the theorem `t` is not in the environment after the proof: Unknown constant `t`",
    });
    const other = judge(command({}), answerOn(2, { messages: [report("t_aux", "propext")] }));
    expect(other).toMatchObject({ verdict: Verdict.ERROR, reason: "#print axioms reported `t_aux`, not the theorem `t`" });
    // A constant whose name merely ends in the theorem's is another constant.
    expect(judge(command({}), answerOn(2, { messages: [report("Evil.t", "propext")] })).verdict).toBe(Verdict.ERROR);
  });

  it("ERROR, failing closed: more than one report, even when one of them is the theorem's and standard", () => {
    const two = judge(command({}), answerOn(2, { messages: [report("t", "propext"), report("Evil.t", "Lean.ofReduceBool")] }));
    expect(two).toMatchObject({
      verdict: Verdict.ERROR,
      reason: "#print axioms reported 2 constants (`t`, `Evil.t`), not just the theorem `t`",
    });
    const twoClean = judge(command({}), answerOn(2, { messages: [report("Evil.t"), report("t", "propext")] }));
    expect(twoClean.verdict).toBe(Verdict.ERROR);
  });

  it("ERROR: an axioms answer out of the REPL's env sequence (forged output) is not believed", () => {
    const forged = judge(command({}), answerOn(7, { messages: [report("t", "propext")] }));
    expect(forged.verdict).toBe(Verdict.ERROR);
    expect(forged.reason).toContain("out of sequence");
  });

  it("ERROR: the REPL refused the proof command, or answered it oddly", () => {
    expect(judge({ kind: "error", response: { message: "Unknown environment." } }, undefined)).toMatchObject({
      verdict: Verdict.ERROR,
      reason: "the REPL did not elaborate the proof: Unknown environment.",
    });
    expect(judge({ kind: "proofStep", response: { proofState: 1, goals: [] } }, undefined).verdict).toBe(Verdict.ERROR);
  });

  it("ERROR rather than PROVED when the axioms were never checked", () => {
    expect(judge(command({}), undefined)).toMatchObject({ verdict: Verdict.ERROR, reason: "the axioms of the theorem were not checked" });
  });

  it("asks for #print axioms only after a proof without errors", () => {
    expect(needsAxiomsCheck(command({}))).toBe(true);
    expect(needsAxiomsCheck(command({ messages: [sorryWarning] }))).toBe(true);
    expect(needsAxiomsCheck(command({ messages: [error("x")] }))).toBe(false);
    expect(needsAxiomsCheck({ kind: "error", response: { message: "Unknown environment." } })).toBe(false);
  });
});
