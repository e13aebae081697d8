// Signals of partial progress for shaped rewards, from one elaboration of the proof
// (reference/lean-verification.md §4): tactics that elaborated before the first
// error (from `allTactics`), the goals left (also those an error closed), and the
// number of errors.
import type { CommandResponse, ReplMessage, ReplSorry, ReplTactic } from "../repl/protocol.js";
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

/** How many goals a tactic faced: the REPL prints one `⊢` line per goal. */
function goalCount(goals: string): number {
  return goals.split("\n").filter((line) => line.startsWith("⊢")).length;
}

/**
 * Goals that Lean's error recovery closed: a tactic that throws has the goals it was
 * working on admitted (a synthetic sorry, no "unsolved goals" error), so they are goals
 * left, counted from the innermost tactic holding the first error. Without this, an
 * error would earn more partial credit than leaving the same goals open.
 */
function abandonedGoals(tactics: readonly ReplTactic[], messages: readonly ReplMessage[]): number {
  let first: SourcePosition | undefined;
  for (const message of messages) {
    if (message.severity === "error" && !isUnsolvedGoals(message) && (!first || comparePositions(message.pos, first) < 0))
      first = message.pos;
  }
  if (!first) return 0;
  const at = first;
  const holding = tactics.filter((tactic) => comparePositions(tactic.pos, at) <= 0 && comparePositions(at, tactic.endPos) <= 0);
  const innermost = holding.reduce<ReplTactic | undefined>(
    (inner, tactic) => (!inner || comparePositions(tactic.pos, inner.pos) > 0 ? tactic : inner),
    undefined,
  );
  return innermost ? goalCount(innermost.goals) : 0;
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
    goalsRemaining: remainingGoals(messages, response.sorries ?? []).length + abandonedGoals(tactics, messages),
    errorCount: messages.filter((message) => message.severity === "error").length,
  };
}
