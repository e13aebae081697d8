// Tactic mode's readings of REPL answers: the proof state a `by sorry` statement
// opens, and the status of one tactic. Tactic mode has accepted wrong proofs before
// (repl issue #44); COMPLETED here means "no goals left", and the final reward
// re-checks the assembled proof with Verify.
import { TacticStatus } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ReplMessage, ReplResponse } from "../repl/protocol.js";
import { isSorryWarning } from "../verdict/progress.js";
import { comparePositions, type SourcePosition } from "../verdict/source-position.js";

export type ProofStart =
  | { ok: true; proofState: number; goals: string[]; messages: ReplMessage[] }
  | { ok: false; reason: string; messages: ReplMessage[] };

/** The proof state of the `sorry` at `sorryAt`, which the service appended to the statement. */
export function readProofStart(response: ReplResponse, sorryAt: SourcePosition): ProofStart {
  if (response.kind !== "command") {
    const detail = response.kind === "error" ? response.response.message : "it answered with a proof state";
    return { ok: false, reason: `the REPL did not elaborate the statement: ${detail}`, messages: [] };
  }
  const messages = response.response.messages ?? [];
  const error = messages.find((message) => message.severity === "error");
  if (error) return { ok: false, reason: `the statement does not elaborate: ${error.data}`, messages };
  const sorry = (response.response.sorries ?? []).find((s) => s.pos && comparePositions(s.pos, sorryAt) === 0);
  if (sorry?.proofState === undefined) {
    return { ok: false, reason: "the REPL reported no proof state for the statement's sorry", messages };
  }
  return {
    ok: true,
    proofState: sorry.proofState,
    goals: [sorry.goal],
    messages: messages.filter((message) => !isSorryWarning(message)),
  };
}

export interface TacticOutcome {
  status: TacticStatus;
  /** The new proof state; undefined on ERROR (the state the tactic ran on is unchanged). */
  proofState: number | undefined;
  goals: string[];
  messages: ReplMessage[];
}

export function readTacticOutcome(response: ReplResponse): TacticOutcome {
  if (response.kind === "error") {
    // e.g. "Lean error:\n<input>:1:1: unknown tactic": the tactic did not parse.
    return failed([{ severity: "error", pos: { line: 0, column: 0 }, data: response.response.message }]);
  }
  if (response.kind === "command") {
    return failed([{ severity: "error", pos: { line: 0, column: 0 }, data: "the REPL answered a tactic with an environment" }]);
  }
  const step = response.response;
  const messages = step.messages ?? [];
  // A tactic that parses but fails is not a REPL error: it shows as an error message,
  // sometimes with "Incomplete: contains sorry" and no goals (error recovery).
  if (messages.some((message) => message.severity === "error") || step.proofStatus?.startsWith("Error")) {
    const status = step.proofStatus?.startsWith("Error")
      ? [...messages, { severity: "error" as const, pos: { line: 0, column: 0 }, data: step.proofStatus }]
      : messages;
    return failed(status);
  }
  // REPLs before PR #63 send no proofStatus; then only "no goals" with no sorry can mean done (a macro
  // such as `stop` closes goals with a sorry the tactic's text never spelled).
  const sorried = (step.sorries ?? []).length > 0 || messages.some(isSorryWarning);
  const completed = step.proofStatus === undefined ? step.goals.length === 0 && !sorried : step.proofStatus === "Completed" && !sorried;
  return {
    status: completed ? TacticStatus.COMPLETED : TacticStatus.INCOMPLETE,
    proofState: step.proofState,
    goals: step.goals,
    messages,
  };
}

function failed(messages: ReplMessage[]): TacticOutcome {
  return { status: TacticStatus.ERROR, proofState: undefined, goals: [], messages };
}
