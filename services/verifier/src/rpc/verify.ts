// Verify (command mode): screen the proof, join it to the dataset's statement, have a
// worker elaborate it on the header's environment, ask `#print axioms` about the
// theorem, and judge. Shared by Verify and VerifyBatch.
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  Verdict,
  VerdictTier,
  type VerifyRequest,
  type VerifyResponse,
  type VerifyResponseSchema,
} from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { BUILTIN_TABLE, type TokenTable } from "@lean-grpo/lean";
import type { ReplConfig } from "../config.js";
import type { VerifierMetrics } from "../metrics/verifier-metrics.js";
import type { ReplPool } from "../pool/repl-pool.js";
import type { WorkerLease } from "../pool/repl-worker.js";
import type { CommandRequest, ReplResponse } from "../repl/protocol.js";
import { ReplFailure } from "../repl/repl-failure.js";
import type { ReplayChecker } from "../replay/replay-checker.js";
import { decideWithReplay } from "../replay/replay-verdict.js";
import { printAxiomsCommand } from "../verdict/axioms.js";
import { classifyProof, needsAxiomsCheck, type Judgement } from "../verdict/classify-verdict.js";
import { theoremErrorIn } from "../verdict/theorem-error.js";
import type { ScreenThreads } from "../screen/screen-threads.js";
import { prepareProof, type CheckedSource, type Screened } from "../verdict/proof-source.js";
import { InvalidField, theoremTarget, type TheoremTarget } from "../verdict/theorem-target.js";
import { noReplConfigured } from "./connect-errors.js";
import { checkText, leanTimeoutMs } from "./request-limits.js";
import { toLeanMessage, toSorry } from "./to-proto.js";

/** A VerifyResponse as a plain object (the init shape without the message class). */
export type VerifyResult = Exclude<MessageInitShape<typeof VerifyResponseSchema>, VerifyResponse>;

export interface VerifyDependencies {
  config: ReplConfig;
  pool: ReplPool | undefined;
  metrics: VerifierMetrics;
  /** The kernel replay tier; undefined when `repl.replay` is off. */
  replay: ReplayChecker | undefined;
  /** Where proofs are screened off the event loop; in line when absent. */
  screens?: ScreenThreads;
}

export interface ValidVerifyRequest {
  target: TheoremTarget;
  proof: string;
  timeoutMs: number;
  /** Names the item of a batch in errors (e.g. "items[3]."); "" for Verify. */
  fieldPrefix: string;
}

/** Checks the request's fields; `prefix` names the item of a batch (e.g. "items[3]."). */
export function validateVerifyRequest(request: VerifyRequest, config: ReplConfig, prefix = ""): ValidVerifyRequest {
  try {
    const target = theoremTarget(request.theorem, config.default_header, config.allowed_headers);
    checkText("proof", request.proof, config);
    return { target, proof: request.proof, timeoutMs: leanTimeoutMs("timeout_ms", request.timeoutMs, config), fieldPrefix: prefix };
  } catch (error) {
    if (error instanceof InvalidField) throw error.under(prefix);
    throw error;
  }
}

interface Elaboration {
  source: CheckedSource;
  proof: ReplResponse;
  axioms: ReplResponse | undefined;
  leanMs: number;
}

/** The proof screen, in a screen thread when there are some (a long proof then holds no event loop). */
function screenProof(deps: VerifyDependencies, target: TheoremTarget, proof: string, table: TokenTable): Promise<Screened<CheckedSource>> {
  return deps.screens ? deps.screens.proof(target, proof, table) : Promise.resolve(prepareProof(target, proof, table));
}

export async function verifyProof(request: ValidVerifyRequest, signal: AbortSignal, deps: VerifyDependencies): Promise<VerifyResult> {
  const started = performance.now();
  const finish = (
    verdict: Verdict,
    decidedBy: VerdictTier,
    reason: string,
    fields: Partial<VerifyResult>,
    timings: Partial<Timings> = {},
  ): VerifyResult => {
    const totalMs = performance.now() - started;
    deps.metrics.recordVerify(Verdict[verdict], totalMs);
    return { verdict, decidedBy, reason, ...fields, timings: { queueMs: 0, headerMs: 0, leanMs: 0, replayMs: 0, ...timings, totalMs } };
  };

  /** A refused proof is the model's REJECTED verdict; a refused context or statement is an invalid request. */
  const refused = (screened: Extract<Screened<unknown>, { ok: false }>, timings: Partial<Timings> = {}): VerifyResult => {
    if (screened.field) throw new InvalidField(request.fieldPrefix + screened.field, screened.reason);
    return finish(Verdict.REJECTED, VerdictTier.SCREEN, screened.reason, {}, timings);
  };

  if (!deps.pool) {
    // Without Lean the screen still answers what it refuses (on the built-in token table).
    const prepared = await screenProof(deps, request.target, request.proof, BUILTIN_TABLE);
    if (!prepared.ok) return refused(prepared);
    throw noReplConfigured();
  }

  const clock: { leanStarted?: number } = {};
  let checkedSource: string | undefined;
  try {
    // The screen runs on the worker's lease: it lexes with the header's token table, read from Lean.
    const result = await deps.pool.run({
      header: request.target.header,
      signal,
      run: async (lease): Promise<Screened<Elaboration>> => {
        const prepared = await screenProof(deps, request.target, request.proof, lease.tokenTable);
        if (!prepared.ok) return prepared;
        checkedSource = prepared.value.text;
        return {
          ok: true,
          value: await elaborate(lease, prepared.value, request.target.fullName, request.timeoutMs, signal, deps.config.all_tactics, clock),
        };
      },
    });
    const timings = { queueMs: result.queueMs, headerMs: result.headerMs };
    if (!result.value.ok) return refused(result.value, timings);
    const elaboration = result.value.value;
    const judgement = classifyProof({
      proof: elaboration.proof,
      axioms: elaboration.axioms,
      theoremName: request.target.name,
      fullName: request.target.fullName,
      proofStart: elaboration.source.proofStart,
    });
    const decision = await decideWithReplay(judgement, request.target, elaboration.source, deps.config.replay, deps.replay, signal);
    // The reason stays Lean's first error; theorem_error tells the caller that it was the theorem's, not the proof's.
    const theoremError = decision.verdict === Verdict.ERROR ? theoremErrorIn(judgement.messages, elaboration.source) : undefined;
    const fields = { ...judged(judgement, elaboration.source, decision.axioms), ...(theoremError ? { theoremError } : {}) };
    return finish(decision.verdict, decision.decidedBy, decision.reason, fields, {
      ...timings,
      leanMs: elaboration.leanMs,
      replayMs: decision.replayMs,
    });
  } catch (error) {
    if (!signal.aborted && error instanceof ReplFailure && error.kind !== "shutdown" && error.kind !== "cancel") {
      const leanMs = clock.leanStarted === undefined ? 0 : performance.now() - clock.leanStarted;
      const fields = checkedSource === undefined ? {} : { checkedSource };
      if (error.kind !== "timeout") return finish(Verdict.CRASHED, VerdictTier.REPL, error.message, fields, { leanMs });
      // Before Lean started on the proof, it was the header that ran out of time.
      const reason =
        clock.leanStarted === undefined
          ? error.message
          : `Lean ran past its time limit of ${request.timeoutMs} ms; the worker was restarted`;
      return finish(Verdict.TIMEOUT, VerdictTier.REPL, reason, fields, { leanMs });
    }
    throw error;
  }
}

type Timings = { queueMs: number; headerMs: number; leanMs: number; replayMs: number };

async function elaborate(
  lease: WorkerLease,
  source: CheckedSource,
  fullName: string,
  timeoutMs: number,
  signal: AbortSignal,
  allTactics: boolean,
  clock: { leanStarted?: number },
): Promise<Elaboration> {
  // The time limit counts from here: waiting in the queue and the header do not use it up.
  clock.leanStarted = performance.now();
  const deadline = Date.now() + timeoutMs;
  const command: CommandRequest = { cmd: source.text, env: lease.headerEnv };
  if (allTactics) command.allTactics = true;
  const proof = await lease.send(command, { deadline, signal });
  const axioms =
    proof.kind === "command" && needsAxiomsCheck(proof)
      ? await lease.send({ cmd: printAxiomsCommand(fullName), env: proof.response.env }, { deadline, signal })
      : undefined;
  return { source, proof, axioms, leanMs: performance.now() - clock.leanStarted };
}

function judged(judgement: Judgement, source: CheckedSource, axioms: string[]): Partial<VerifyResult> {
  return {
    messages: judgement.messages.map(toLeanMessage),
    sorries: judgement.sorries.map(toSorry),
    axioms,
    goals: judgement.goals,
    progress: judgement.progress,
    checkedSource: source.text,
  };
}
