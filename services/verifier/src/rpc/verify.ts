// Verify (command mode): screen the proof, join it to the dataset's statement, have a
// worker elaborate it on the header's environment, ask `#print axioms` about the
// theorem, and judge. Shared by Verify and VerifyBatch.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Verdict, type VerifyRequest, type VerifyResponse, type VerifyResponseSchema } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ReplConfig } from "../config.js";
import type { VerifierMetrics } from "../metrics/verifier-metrics.js";
import type { ReplPool } from "../pool/repl-pool.js";
import type { WorkerLease } from "../pool/repl-worker.js";
import type { CommandRequest, ReplResponse } from "../repl/protocol.js";
import { ReplFailure } from "../repl/repl-failure.js";
import { printAxiomsCommand } from "../verdict/axioms.js";
import { classifyProof, needsAxiomsCheck, type Judgement } from "../verdict/classify-verdict.js";
import { prepareProof, type CheckedSource } from "../verdict/proof-source.js";
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
}

export interface ValidVerifyRequest {
  target: TheoremTarget;
  proof: string;
  timeoutMs: number;
}

/** Checks the request's fields; `prefix` names the item of a batch (e.g. "items[3]."). */
export function validateVerifyRequest(request: VerifyRequest, config: ReplConfig, prefix = ""): ValidVerifyRequest {
  try {
    const target = theoremTarget(request.theorem, config.default_header);
    checkText("proof", request.proof, config);
    return { target, proof: request.proof, timeoutMs: leanTimeoutMs("timeout_ms", request.timeoutMs, config) };
  } catch (error) {
    if (error instanceof InvalidField) throw error.under(prefix);
    throw error;
  }
}

interface Elaboration {
  proof: ReplResponse;
  axioms: ReplResponse | undefined;
  leanMs: number;
}

export async function verifyProof(request: ValidVerifyRequest, signal: AbortSignal, deps: VerifyDependencies): Promise<VerifyResult> {
  const started = performance.now();
  const finish = (verdict: Verdict, reason: string, fields: Partial<VerifyResult>, timings: Partial<Timings> = {}): VerifyResult => {
    const totalMs = performance.now() - started;
    deps.metrics.recordVerify(Verdict[verdict], totalMs);
    return { verdict, reason, ...fields, timings: { queueMs: 0, headerMs: 0, leanMs: 0, ...timings, totalMs } };
  };

  const prepared = prepareProof(request.target, request.proof);
  if (!prepared.ok) return finish(Verdict.REJECTED, prepared.reason, {});
  const source = prepared.value;
  if (!deps.pool) throw noReplConfigured();

  const clock: { leanStarted?: number } = {};
  try {
    const result = await deps.pool.run({
      header: request.target.header,
      signal,
      run: (lease) => elaborate(lease, source, request.target.fullName, request.timeoutMs, signal, deps.config.all_tactics, clock),
    });
    const judgement = classifyProof({
      proof: result.value.proof,
      axioms: result.value.axioms,
      theoremName: request.target.name,
      fullName: request.target.fullName,
      proofStart: source.proofStart,
    });
    return finish(judgement.verdict, judgement.reason, judged(judgement, source), {
      queueMs: result.queueMs,
      headerMs: result.headerMs,
      leanMs: result.value.leanMs,
    });
  } catch (error) {
    if (!signal.aborted && error instanceof ReplFailure && error.kind !== "shutdown" && error.kind !== "cancel") {
      const leanMs = clock.leanStarted === undefined ? 0 : performance.now() - clock.leanStarted;
      if (error.kind !== "timeout") return finish(Verdict.CRASHED, error.message, { checkedSource: source.text }, { leanMs });
      // Before Lean started on the proof, it was the header that ran out of time.
      const reason =
        clock.leanStarted === undefined
          ? error.message
          : `Lean ran past its time limit of ${request.timeoutMs} ms; the worker was restarted`;
      return finish(Verdict.TIMEOUT, reason, { checkedSource: source.text }, { leanMs });
    }
    throw error;
  }
}

type Timings = { queueMs: number; headerMs: number; leanMs: number };

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
  return { proof, axioms, leanMs: performance.now() - clock.leanStarted };
}

function judged(judgement: Judgement, source: CheckedSource): Partial<VerifyResult> {
  return {
    messages: judgement.messages.map(toLeanMessage),
    sorries: judgement.sorries.map(toSorry),
    axioms: judgement.axioms,
    goals: judgement.goals,
    progress: judgement.progress,
    checkedSource: source.text,
  };
}
