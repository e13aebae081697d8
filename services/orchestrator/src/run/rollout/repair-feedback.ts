// What the checker tells the model after a failed attempt (repair mode). Lean: the verdict,
// the first errors with their line and column in the checked file, and the goals left; math:
// only that the answer is not correct: never the answer, or the reward would leak it.
// The text fills prompt.feedback_template's {feedback}; the turn is cut to a token bound by
// the caller (repair-rollout.ts).
import { TaskKind, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { Severity, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { errorPlace } from "./repair-error-location.js";

/** Lean errors quoted in one feedback turn (the first ones: later errors often follow from them). */
export const FEEDBACK_MAX_ERRORS = 3;
/** Goals quoted in one feedback turn. */
export const FEEDBACK_MAX_GOALS = 3;

export const MATH_FEEDBACK = "Your answer is not correct.";

export function isMathTask(theorem: Theorem): boolean {
  return theorem.kind === TaskKind.MATH_ANSWER || (!theorem.statement && theorem.answer !== "");
}

/** The checker's feedback on one scored attempt, as text. */
export function feedbackText(theorem: Theorem, result: RewardResult | undefined): string {
  if (isMathTask(theorem)) return MATH_FEEDBACK;
  const verification = result?.verification;
  if (!verification) return "Lean did not accept the proof.";
  const verdict = Verdict[verification.verdict] ?? "UNSPECIFIED";
  const errors = verification.messages.filter((m) => m.severity === Severity.ERROR).slice(0, FEEDBACK_MAX_ERRORS);
  // The reason names the first error when there is one: quote it once, with its position, below.
  const reason = errors.length === 0 && verification.reason ? ` (${verification.reason})` : "";
  const lines = [`Lean's verdict: ${verdict}${reason}.`];
  for (const m of errors) {
    // A whole-file proof's error also says which declaration it is in (an auxiliary, or the theorem's proof).
    const place = m.pos ? errorPlace(verification.checkedSource, theorem.statement, theorem.context, m.pos.line) : "";
    const where = m.pos ? `line ${m.pos.line}, column ${m.pos.column}${place ? ` (${place})` : ""}` : "error";
    lines.push(`${where}: ${m.data.trim()}`);
  }
  // Lean's "unsolved goals" error already lists its goals: quote each goal once.
  const goals = verification.goals.filter((g) => !errors.some((m) => m.data.includes(g.trim()))).slice(0, FEEDBACK_MAX_GOALS);
  if (goals.length > 0) lines.push("Goals left:", ...goals.map((g) => g.trim()));
  return lines.join("\n");
}

/** The environment turn's text: the template with {feedback} and {problem} (the first turn's prompt text) filled. */
export function fillFeedback(template: string, feedback: string, problem: string): string {
  return template.replaceAll("{feedback}", feedback).replaceAll("{problem}", problem);
}
