// Signals of partial progress for shaped rewards, from one elaboration of the proof
// (reference/lean-verification.md §4): tactics that elaborated before the first
// error (from `allTactics`), the goals left, and the number of errors.
import type { CommandResponse, ReplMessage, ReplSorry } from "../repl/protocol.js";
import { comparePositions, type SourcePosition } from "./source-position.js";

export interface ProgressSignals {
  tacticsTotal: number;
  tacticsValidBeforeFirstError: number;
  goalsRemaining: number;
  errorCount: number;
}

const UNSOLVED_GOALS = "unsolved goals";
const SORRY_WARNING = /declaration uses ['`]sorry['`]/u;

export function isUnsolvedGoals(message: ReplMessage): boolean {
  return message.severity === "error" && message.data.startsWith(UNSOLVED_GOALS);
}

/** Lean's "declaration uses sorry" warning, in the old ('sorry') and the new (`sorry`) wording. */
export function isSorryWarning(message: ReplMessage): boolean {
  return message.severity === "warning" && SORRY_WARNING.test(message.data);
}

/**
 * The goals an "unsolved goals" error lists: after its first line, one goal per
 * blank-line-separated block ("case zero\n⊢ 0 = 0\n\ncase succ\n...").
 */
export function goalsOf(message: ReplMessage): string[] {
  const body = message.data.slice(UNSOLVED_GOALS.length).replace(/^\n/u, "");
  return body.split("\n\n").filter((goal) => goal.trim() !== "");
}

/** Goals left: those of every "unsolved goals" error, then those closed by a sorry. */
export function remainingGoals(messages: readonly ReplMessage[], sorries: readonly ReplSorry[]): string[] {
  return [...messages.filter(isUnsolvedGoals).flatMap(goalsOf), ...sorries.map((sorry) => sorry.goal)];
}

/**
 * Where the first error is, for counting the tactics before it. An "unsolved goals"
 * error is reported on the whole `by` block that left goals open, yet every tactic
 * inside it ran: it counts from the end of that block.
 */
function firstErrorPosition(messages: readonly ReplMessage[]): SourcePosition | undefined {
  let first: SourcePosition | undefined;
  for (const message of messages) {
    if (message.severity !== "error") continue;
    const at = isUnsolvedGoals(message) ? (message.endPos ?? message.pos) : message.pos;
    if (!first || comparePositions(at, first) < 0) first = at;
  }
  return first;
}

export function progressOf(response: CommandResponse, proofStart: SourcePosition): ProgressSignals {
  const messages = response.messages ?? [];
  // Tactics of the context's helper lemmas are not the model's.
  const tactics = (response.tactics ?? []).filter((tactic) => comparePositions(tactic.pos, proofStart) >= 0);
  const firstError = firstErrorPosition(messages);
  const valid = firstError ? tactics.filter((tactic) => comparePositions(tactic.endPos, firstError) <= 0).length : tactics.length;
  return {
    tacticsTotal: tactics.length,
    tacticsValidBeforeFirstError: valid,
    goalsRemaining: remainingGoals(messages, response.sorries ?? []).length,
    errorCount: messages.filter((message) => message.severity === "error").length,
  };
}
