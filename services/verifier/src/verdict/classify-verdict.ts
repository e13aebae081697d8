// The verdict of an elaborated proof. PROVED only with no error message, no sorry
// (neither in `sorries` nor as Lean's warning), the theorem present in the resulting
// environment, and `#print axioms` within {propext, Classical.choice, Quot.sound}.
// Never "no errors" alone: `#exit`, a proof that hides a sorry, or a custom axiom all
// elaborate without errors (reference/lean-verification.md §3).
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ReplMessage, ReplResponse, ReplSorry } from "../repl/protocol.js";
import { isDeclaredConstant, readAxiomsReports, STANDARD_AXIOMS } from "./axioms.js";
import { isSorryWarning, isUnsolvedGoals, progressOf, remainingGoals, type ProgressSignals } from "./progress.js";
import { comparePositions, type SourcePosition } from "./source-position.js";

export interface ElaboratedProof {
  /** The REPL's answer to the proof command. */
  proof: ReplResponse;
  /** Its answer to `#print axioms NAME` on the proof's environment; absent when the proof had errors. */
  axioms: ReplResponse | undefined;
  theoremName: string;
  /** The constant the statement declares (TheoremTarget.fullName); the one report must be about it. */
  fullName: string;
  proofStart: SourcePosition;
}

export interface Judgement {
  verdict: Verdict.PROVED | Verdict.INCOMPLETE | Verdict.ERROR;
  reason: string;
  messages: ReplMessage[];
  sorries: ReplSorry[];
  axioms: string[];
  goals: string[];
  progress: ProgressSignals;
}

const NO_PROGRESS: ProgressSignals = { tacticsTotal: 0, tacticsValidBeforeFirstError: 0, goalsRemaining: 0, errorCount: 0 };

/** Whether `#print axioms` must run: only a proof with no error can still be PROVED, or show which axioms it used. */
export function needsAxiomsCheck(proof: ReplResponse): boolean {
  return proof.kind === "command" && !(proof.response.messages ?? []).some((message) => message.severity === "error");
}

export function classifyProof(input: ElaboratedProof): Judgement {
  const { proof } = input;
  if (proof.kind !== "command") {
    const detail = proof.kind === "error" ? proof.response.message : "it answered with a proof state";
    return judgement(Verdict.ERROR, `the REPL did not elaborate the proof: ${detail}`, [], [], [], NO_PROGRESS);
  }
  const messages = proof.response.messages ?? [];
  const sorries = proof.response.sorries ?? [];
  const progress = progressOf(proof.response, input.proofStart);
  const goals = remainingGoals(messages, sorries);
  const done = (verdict: Judgement["verdict"], reason: string, axioms: string[] = []) =>
    judgement(verdict, reason, messages, sorries, goals, progress, axioms);

  const errors = messages.filter((message) => message.severity === "error");
  const otherErrors = errors.filter((message) => !isUnsolvedGoals(message));
  if (otherErrors.length > 0) {
    const first = otherErrors.reduce((a, b) => (comparePositions(b.pos, a.pos) < 0 ? b : a));
    return done(Verdict.ERROR, `${firstLine(first.data)} (at ${first.pos.line}:${first.pos.column})`);
  }
  if (errors.length > 0) return done(Verdict.INCOMPLETE, `unsolved goals (${goals.length} left)`);

  if (!input.axioms) return done(Verdict.ERROR, "the axioms of the theorem were not checked");
  const answer = readAxiomsReports(input.axioms);
  if (sorries.length > 0 || messages.some(isSorryWarning)) {
    return done(Verdict.INCOMPLETE, "the proof contains sorry", answer.found ? answer.reports.flatMap((r) => r.axioms) : []);
  }
  // Each request gets the next env id; an answer out of sequence came from somewhere else (output forged mid-proof).
  if (input.axioms.kind === "command" && input.axioms.response.env !== proof.response.env + 1) {
    return done(
      Verdict.ERROR,
      `the REPL's answers are out of sequence (#print axioms answered env ${input.axioms.response.env} after the proof's env ${proof.response.env})`,
    );
  }
  if (!answer.found) {
    return done(
      Verdict.ERROR,
      `the theorem \`${input.theoremName}\` is not in the environment after the proof: ${firstLine(answer.detail)}`,
    );
  }
  // Fail closed: exactly one report, about exactly the declared constant.
  if (answer.reports.length !== 1) {
    const named = answer.reports.map((r) => `\`${r.constant}\``).join(", ");
    return done(
      Verdict.ERROR,
      `#print axioms reported ${answer.reports.length} constants (${named}), not just the theorem \`${input.fullName}\``,
    );
  }
  const report = answer.reports[0]!;
  if (!isDeclaredConstant(report.constant, input.fullName)) {
    return done(Verdict.ERROR, `#print axioms reported \`${report.constant}\`, not the theorem \`${input.fullName}\``, report.axioms);
  }
  if (report.axioms.includes("sorryAx")) return done(Verdict.INCOMPLETE, "the theorem depends on sorryAx", report.axioms);
  const nonStandard = report.axioms.filter((axiom) => !STANDARD_AXIOMS.has(axiom));
  if (nonStandard.length > 0) {
    return done(Verdict.ERROR, `the theorem depends on non-standard axioms: ${nonStandard.join(", ")}`, report.axioms);
  }
  return done(Verdict.PROVED, "proved", report.axioms);
}

function judgement(
  verdict: Judgement["verdict"],
  reason: string,
  messages: ReplMessage[],
  sorries: ReplSorry[],
  goals: string[],
  progress: ProgressSignals,
  axioms: string[] = [],
): Judgement {
  return { verdict, reason, messages, sorries, axioms, goals, progress };
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0]!.trim();
}
