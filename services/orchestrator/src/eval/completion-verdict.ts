// One evaluated completion as people read it (EvaluatedCompletion, `lean-grpo eval --out`):
// its text, what the checker decided, and for a Lean proof the first error Lean gave, for a
// math answer what the answer check said.
import type { Completion } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { FinishReason } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { Severity, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";

export interface CompletionVerdict {
  text: string;
  tokens: number;
  finish_reason: "stop" | "length" | "abort" | "unspecified";
  solved: boolean;
  reward: number;
  /** Lean tasks: PROVED, INCOMPLETE, ERROR, TIMEOUT, REJECTED or CRASHED; absent for math problems. */
  verdict?: string;
  /** Lean tasks: the verdict's reason in one line, or why there was no verdict ("no proof found in the completion"). */
  reason?: string;
  /** Lean tasks: `line:column: message` of the first error; absent when Lean gave none. */
  first_error?: string;
  /** Math problems: the answer check's result (the math_answer component's detail). */
  math_check?: string;
}

/** The scorer whose detail is the math answer check. */
const MATH_ANSWER_SCORER = "math_answer";
/** The scorer of Lean proofs, whose detail says why a completion was not verified at all. */
const LEAN_PROOF_SCORER = "lean_proof";

export function completionVerdict(completion: Completion, result: RewardResult | undefined): CompletionVerdict {
  const verdict: CompletionVerdict = {
    text: completion.text,
    tokens: completion.tokenIds.length,
    finish_reason: finishReason(completion.finishReason),
    solved: result?.solved ?? false,
    reward: result?.reward ?? 0,
  };
  const verification = result?.verification;
  if (verification && verification.verdict !== Verdict.UNSPECIFIED) {
    verdict.verdict = Verdict[verification.verdict];
    if (verification.reason) verdict.reason = verification.reason;
    const error = verification.messages.find((m) => m.severity === Severity.ERROR);
    if (error) verdict.first_error = `${error.pos?.line ?? 0}:${error.pos?.column ?? 0}: ${error.data}`;
  }
  // A Lean completion with no proof in it never reached the verifier: the proof scorer says so.
  const proof = result?.components.find((c) => c.scorer === LEAN_PROOF_SCORER);
  if (!verdict.verdict && proof?.detail) verdict.reason = proof.detail;
  const math = result?.components.find((c) => c.scorer === MATH_ANSWER_SCORER);
  if (math) verdict.math_check = math.detail;
  return verdict;
}

function finishReason(reason: FinishReason): CompletionVerdict["finish_reason"] {
  if (reason === FinishReason.STOP) return "stop";
  if (reason === FinishReason.LENGTH) return "length";
  if (reason === FinishReason.ABORT) return "abort";
  return "unspecified";
}
