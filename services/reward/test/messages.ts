// Builders for the contract's messages that tests feed the service: theorems,
// completions and the verifier responses (input data, as a verifier sends it).
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  CompletionSchema,
  FinishReason,
  TaskKind,
  TheoremSchema,
  type Completion,
  type Theorem,
} from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { ProofProgressSchema, Verdict, VerifyResponseSchema, type VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";

export function leanTheorem(init: MessageInitShape<typeof TheoremSchema> = {}): Theorem {
  return create(TheoremSchema, {
    id: "t1",
    name: "add_zero'",
    statement: "theorem add_zero' (n : Nat) : n + 0 = n",
    kind: TaskKind.LEAN_PROOF,
    ...init,
  });
}

export function mathProblem(answer: string, init: MessageInitShape<typeof TheoremSchema> = {}): Theorem {
  return create(TheoremSchema, { id: "m1", informalStatement: "Compute it.", answer, kind: TaskKind.MATH_ANSWER, ...init });
}

/** A completion whose token ids stand in for its text: one id per character, as a byte-level tokenizer would give. */
export function completion(text: string, init: MessageInitShape<typeof CompletionSchema> = {}): Completion {
  return create(CompletionSchema, {
    text,
    tokenIds: Array.from(text, (ch) => ch.codePointAt(0)!),
    finishReason: FinishReason.STOP,
    ...init,
  });
}

export interface ProgressInit {
  total?: number;
  valid?: number;
  goals?: number;
  errors?: number;
  sorries?: number;
}

export function verification(verdict: Verdict, progress: ProgressInit = {}, reason = ""): VerifyResponse {
  return create(VerifyResponseSchema, {
    verdict,
    reason,
    sorries: Array.from({ length: progress.sorries ?? 0 }, () => ({ goal: "⊢ n + 0 = n" })),
    goals: Array.from({ length: progress.goals ?? 0 }, () => "n : Nat\n⊢ n + 0 = n"),
    progress: create(ProofProgressSchema, {
      tacticsTotal: progress.total ?? 0,
      tacticsValidBeforeFirstError: progress.valid ?? 0,
      goalsRemaining: progress.goals ?? 0,
      errorCount: progress.errors ?? 0,
    }),
  });
}

export const proved = (tactics = 1) => verification(Verdict.PROVED, { total: tactics, valid: tactics });

/** A completion in the shape the default format asks for: thinking, then the proof in a Lean block. */
export function leanAnswer(proof: string, thinking = "Induction is not needed; simp closes it."): string {
  return `<think>${thinking}</think>\n\`\`\`lean\ntheorem add_zero' (n : Nat) : n + 0 = n := ${proof}\n\`\`\``;
}
