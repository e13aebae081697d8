// Gathers what the scorers need for each completion of a request: the task
// kind, for Lean the proof and its verification (passed in, or from the
// verifier, in parallel within the caller's deadline), for math the verdict on
// the boxed answer.
import { setMaxListeners } from "node:events";
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskKind, type Completion, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Verdict, type VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { proofFormatName } from "@lean-grpo/kit";
import { extractProof } from "../lean/extract-proof.js";
import { judgeMathAnswer, type MathJudgeOptions } from "../math/math-verdict.js";
import { mapBounded } from "../verification/map-bounded.js";
import type { Verifier } from "../verification/verifier.js";
import type { Evidence, LeanEvidence, ScoredTask } from "./scorer.js";

export interface CompletionInput {
  completion: Completion;
  /** "completion" or "completions[3]". */
  field: string;
  verification?: VerifyResponse;
  /** "verification" or "verifications[3]". */
  verificationField: string;
}

export interface EvidenceContext {
  verifier: Verifier | undefined;
  /** The call's signal: deadline, cancel, shutdown. */
  signal: AbortSignal;
  /** Absolute time (ms since the epoch) by which verifier calls must end. */
  deadline: number;
  /** VerifyRequest.timeout_ms: Lean's own time limit; 0 for the verifier's default. */
  leanTimeoutMs: number;
  maxParallelVerifications: number;
  math: MathJudgeOptions;
  /** Prefix of VerifyRequest.request_id, for the verifier's logs. */
  requestId: string;
}

function taskOf(theorem: Theorem): ScoredTask {
  switch (theorem.kind) {
    case TaskKind.LEAN_PROOF:
    case TaskKind.MATH_ANSWER:
      return theorem.kind;
    case TaskKind.UNSPECIFIED:
      return theorem.statement.trim() === "" ? TaskKind.MATH_ANSWER : TaskKind.LEAN_PROOF;
    default:
      throw new ConnectError(
        `theorem.kind ${String(theorem.kind)} is not known; accepted: TASK_KIND_LEAN_PROOF, TASK_KIND_MATH_ANSWER, ` +
          "TASK_KIND_UNSPECIFIED (Lean when theorem.statement is set)",
        Code.InvalidArgument,
      );
  }
}

export async function gatherEvidence(theorem: Theorem, inputs: readonly CompletionInput[], context: EvidenceContext): Promise<Evidence[]> {
  const task = taskOf(theorem);
  return task === TaskKind.LEAN_PROOF ? verifiedLeanCompletions(theorem, inputs, context) : judgedMathCompletions(theorem, inputs, context);
}

function isEmpty(completion: Completion): boolean {
  return completion.text.trim() === "";
}

function judgedMathCompletions(theorem: Theorem, inputs: readonly CompletionInput[], context: EvidenceContext): Evidence[] {
  if (theorem.answer.trim() === "") {
    throw new ConnectError(
      'theorem.answer is empty: a math task needs its ground-truth answer (LaTeX or plain text, e.g. "\\\\frac{3}{4}")',
      Code.InvalidArgument,
    );
  }
  return inputs.map((input) => {
    if (input.verification) {
      throw new ConnectError(
        `${input.verificationField}: verifications are for Lean tasks, and this is a math task (theorem.kind / theorem.statement)`,
        Code.InvalidArgument,
      );
    }
    const empty = isEmpty(input.completion);
    const math = empty
      ? { outcome: "no_answer" as const, detail: "empty completion" }
      : judgeMathAnswer(input.completion.text, theorem.answer, context.math);
    return {
      task: TaskKind.MATH_ANSWER,
      field: input.field,
      theorem,
      completion: input.completion,
      empty,
      solved: math.outcome === "correct",
      math,
    };
  });
}

async function verifiedLeanCompletions(
  theorem: Theorem,
  inputs: readonly CompletionInput[],
  context: EvidenceContext,
): Promise<LeanEvidence[]> {
  if (theorem.statement.trim() === "") {
    throw new ConnectError(
      "theorem.statement is empty: a Lean task needs the statement its proofs are checked against",
      Code.InvalidArgument,
    );
  }
  for (const input of inputs) {
    if (input.verification?.verdict === Verdict.UNSPECIFIED) {
      throw new ConnectError(
        `${input.verificationField}.verdict is VERDICT_UNSPECIFIED: pass the verifier's response, or none to let the service verify`,
        Code.InvalidArgument,
      );
    }
  }
  const format = proofFormatName(theorem.proofFormat);
  const proofs = inputs.map((input) => (isEmpty(input.completion) ? undefined : extractProof(input.completion.text, theorem.name, format)));
  const toVerify = inputs.flatMap((input, i) => (!input.verification && proofs[i] ? [i] : []));
  if (toVerify.length > 0 && !context.verifier) {
    throw new ConnectError(
      "no verifier is configured (config key verifier.url), so Lean completions cannot be checked: pass their " +
        "verifications with the request, or start the service with verifier.url set",
      Code.FailedPrecondition,
    );
  }
  const verified = await verifyAll(
    theorem,
    toVerify.map((i) => ({ index: i, field: inputs[i]!.field, proof: proofs[i]!.body })),
    context,
  );
  return inputs.map((input, i) => {
    const verification = input.verification ?? verified.get(i);
    const proof = proofs[i];
    const empty = isEmpty(input.completion);
    return {
      task: TaskKind.LEAN_PROOF,
      field: input.field,
      theorem,
      completion: input.completion,
      empty,
      // A verification passed in for an empty completion was of some other text.
      solved: !empty && verification?.verdict === Verdict.PROVED,
      ...(proof ? { proof } : {}),
      ...(verification ? { verification } : {}),
    };
  });
}

async function verifyAll(
  theorem: Theorem,
  jobs: readonly { index: number; field: string; proof: string }[],
  context: EvidenceContext,
): Promise<Map<number, VerifyResponse>> {
  const verifier = context.verifier;
  if (!verifier || jobs.length === 0) return new Map();
  // The first failure cancels the calls still in flight: the whole request fails anyway.
  const group = new AbortController();
  const signal = AbortSignal.any([context.signal, group.signal]);
  // Every call in flight listens on it (an evaluation's 32 samples of one problem are one group).
  setMaxListeners(Math.max(10, 4 * context.maxParallelVerifications), signal);
  try {
    const results = await mapBounded(jobs, context.maxParallelVerifications, async (job) => {
      const timeoutMs = context.deadline - Date.now();
      if (timeoutMs <= 0) throw new ConnectError("deadline exceeded before the verifier was called", Code.DeadlineExceeded);
      try {
        return await verifier.verify(
          { theorem, proof: job.proof, timeoutMs: context.leanTimeoutMs, requestId: `${context.requestId}/${job.index}` },
          { signal, timeoutMs },
        );
      } catch (error) {
        const cause = ConnectError.from(error);
        throw new ConnectError(`verifier (${verifier.target}) failed on ${job.field}: ${cause.rawMessage}`, cause.code);
      }
    });
    return new Map(jobs.map((job, i) => [job.index, results[i]!]));
  } catch (error) {
    group.abort(error);
    throw error;
  }
}
