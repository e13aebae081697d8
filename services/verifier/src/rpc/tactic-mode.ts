// StartProof / ApplyTactic / EndProof. A session's requests run on the worker
// incarnation that holds its proof states; when that worker restarts they answer
// FAILED_PRECONDITION.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  Severity,
  TacticStatus,
  type ApplyTacticRequest,
  type ApplyTacticResponseSchema,
  type StartProofRequest,
  type StartProofResponseSchema,
} from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ReplConfig } from "../config.js";
import type { ReplPool } from "../pool/repl-pool.js";
import { ReplFailure } from "../repl/repl-failure.js";
import { WorkerLost } from "../pool/repl-pool.js";
import { sessionLost, type ProofSessions } from "../tactic/proof-sessions.js";
import { readProofStart, readTacticOutcome } from "../tactic/tactic-outcome.js";
import type { ScreenThreads } from "../screen/screen-threads.js";
import { prepareProofStart, prepareTactic } from "../verdict/proof-source.js";
import { BUILTIN_TABLE, tablesAfterContext } from "@lean-grpo/lean";
import { InvalidField, theoremTarget } from "../verdict/theorem-target.js";
import { noReplConfigured } from "./connect-errors.js";
import { checkText, leanTimeoutMs } from "./request-limits.js";
import { toLeanMessage } from "./to-proto.js";

export interface TacticModeDependencies {
  config: ReplConfig;
  pool: ReplPool | undefined;
  sessions: ProofSessions;
  /** Where statements and tactics are screened off the event loop; in line when absent. */
  screens?: ScreenThreads;
}

export async function startProof(
  request: StartProofRequest,
  context: HandlerContext,
  deps: TacticModeDependencies,
): Promise<MessageInitShape<typeof StartProofResponseSchema>> {
  const target = theoremTarget(request.theorem, deps.config.default_header, deps.config.allowed_headers);
  const timeoutMs = leanTimeoutMs("timeout_ms", request.timeoutMs, deps.config);
  const pool = deps.pool ?? raise(noReplConfigured());
  const { signal } = context;
  try {
    const result = await pool.run({
      header: target.header,
      signal,
      // Screened again on the worker's lease, with the token table Lean reported for the header.
      run: async (lease) => {
        const prepared = deps.screens ? await deps.screens.start(target, lease.tokenTable) : prepareProofStart(target, lease.tokenTable);
        if (!prepared.ok) throw new InvalidField(prepared.field ?? "theorem", prepared.reason);
        const answer = await lease.send({ cmd: prepared.value.text, env: lease.headerEnv }, { deadline: Date.now() + timeoutMs, signal });
        return { answer, sorryAt: prepared.value.sorryAt };
      },
    });
    const start = readProofStart(result.value.answer, result.value.sorryAt);
    if (!start.ok) throw new InvalidField("theorem.statement", start.reason);
    const session = deps.sessions.open(result.ranOn, target.name, start.proofState, target.header, target.context);
    return { sessionId: session.id, proofState: start.proofState, goals: start.goals, messages: start.messages.map(toLeanMessage) };
  } catch (error) {
    throw tacticModeError(error, signal, {
      timeout: `elaborating the statement ran past ${timeoutMs} ms`,
      crash: (detail) => new ConnectError(`the REPL worker failed while elaborating the statement (${detail}); retry`, Code.Unavailable),
    });
  }
}

export async function applyTactic(
  request: ApplyTacticRequest,
  context: HandlerContext,
  deps: TacticModeDependencies,
): Promise<MessageInitShape<typeof ApplyTacticResponseSchema>> {
  const { signal } = context;
  const session = deps.sessions.use(request.sessionId);
  if (!session.states.has(request.proofState)) {
    throw new InvalidField(
      "proof_state",
      `${request.proofState} is not a proof state of session ${request.sessionId}; its states are ${[...session.states].join(", ")}`,
    );
  }
  checkText("tactic", request.tactic, deps.config);
  const timeoutMs = leanTimeoutMs("timeout_ms", request.timeoutMs, deps.config);
  const table = deps.pool?.tokenTables.get(session.header) ?? BUILTIN_TABLE;
  const prepared = deps.screens
    ? await deps.screens.tactic(request.tactic, session.theoremName, session.context, table)
    : prepareTactic(request.tactic, session.theoremName, tablesAfterContext(session.context, table));
  if (!prepared.ok) {
    // The model's step failed; the orchestrator feeds the reason back like a Lean error.
    return {
      status: TacticStatus.ERROR,
      messages: [{ severity: Severity.ERROR, data: `refused before Lean ran: ${prepared.reason}` }],
    };
  }
  const pool = deps.pool ?? raise(noReplConfigured());
  try {
    const result = await pool.run({
      pin: session.pin,
      signal,
      run: (lease) => lease.send({ tactic: prepared.value, proofState: request.proofState }, { deadline: Date.now() + timeoutMs, signal }),
    });
    const outcome = readTacticOutcome(result.value);
    if (outcome.proofState !== undefined) session.states.add(outcome.proofState);
    return {
      status: outcome.status,
      proofState: outcome.proofState,
      goals: outcome.goals,
      messages: outcome.messages.map(toLeanMessage),
    };
  } catch (error) {
    if (error instanceof WorkerLost) throw sessionLost(session.id, error.kind);
    throw tacticModeError(error, signal, {
      timeout: `the tactic ran past ${timeoutMs} ms; its worker was restarted and session ${session.id} is lost`,
      crash: (detail) =>
        new ConnectError(
          `the REPL worker failed (${detail}); session ${session.id} is lost, start the proof again`,
          Code.FailedPrecondition,
        ),
    });
  }
}

/**
 * A worker that timed out or died mid-request has been restarted: say so with the
 * right code. Other errors go on to the service's error mapping as they are.
 */
function tacticModeError(
  error: unknown,
  signal: AbortSignal,
  messages: { timeout: string; crash: (detail: string) => ConnectError },
): unknown {
  if (!signal.aborted && error instanceof ReplFailure) {
    if (error.kind === "timeout") return new ConnectError(messages.timeout, Code.DeadlineExceeded);
    if (error.kind !== "shutdown" && error.kind !== "cancel") return messages.crash(error.message);
  }
  return error;
}

function raise(error: Error): never {
  throw error;
}
