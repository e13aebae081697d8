// What `lean-grpo eval --out` keeps of each completion: the verdict, the first Lean error, the math check.
import { create } from "@bufbuild/protobuf";
import { CompletionSchema, FinishReason } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { RewardResultSchema } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { Severity, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { describe, expect, it } from "vitest";
import { completionVerdict } from "../src/eval/completion-verdict.js";

describe("completionVerdict", () => {
  it("keeps a Lean proof's verdict, reason and first error (not a warning before it)", () => {
    const completion = create(CompletionSchema, { text: "by simp", tokenIds: [1, 2, 3], finishReason: FinishReason.STOP });
    const result = create(RewardResultSchema, {
      reward: -0.5,
      solved: false,
      verification: {
        verdict: Verdict.ERROR,
        reason: "unsolved goals",
        messages: [
          { severity: Severity.WARNING, pos: { line: 1, column: 0 }, data: "unused variable" },
          { severity: Severity.ERROR, pos: { line: 2, column: 4 }, data: "unsolved goals\n⊢ p" },
          { severity: Severity.ERROR, pos: { line: 3, column: 0 }, data: "second" },
        ],
      },
    });
    expect(completionVerdict(completion, result)).toEqual({
      text: "by simp",
      tokens: 3,
      finish_reason: "stop",
      solved: false,
      reward: -0.5,
      verdict: "ERROR",
      reason: "unsolved goals",
      first_error: "2:4: unsolved goals\n⊢ p",
    });
  });

  it("keeps a math answer's check, and no Lean fields", () => {
    const completion = create(CompletionSchema, { text: "\\boxed{3/4}", tokenIds: [5], finishReason: FinishReason.LENGTH });
    const result = create(RewardResultSchema, {
      reward: 1,
      solved: true,
      components: [
        { scorer: "format", value: 1, detail: "boxed" },
        { scorer: "math_answer", value: 1, detail: "boxed 3/4 == 0.75" },
      ],
    });
    expect(completionVerdict(completion, result)).toEqual({
      text: "\\boxed{3/4}",
      tokens: 1,
      finish_reason: "length",
      solved: true,
      reward: 1,
      math_check: "boxed 3/4 == 0.75",
    });
  });

  it("says why a Lean completion got no verdict: no proof in it", () => {
    const completion = create(CompletionSchema, { text: "-- thinking", tokenIds: [1], finishReason: FinishReason.STOP });
    const result = create(RewardResultSchema, {
      reward: 0,
      components: [{ scorer: "lean_proof", value: 0, detail: "no proof found in the completion" }],
    });
    expect(completionVerdict(completion, result)).toMatchObject({ solved: false, reason: "no proof found in the completion" });
    expect(completionVerdict(completion, result).verdict).toBeUndefined();
  });

  it("counts a completion the reward service gave no result for as unsolved", () => {
    const completion = create(CompletionSchema, { text: "x", tokenIds: [], finishReason: FinishReason.ABORT });
    expect(completionVerdict(completion, undefined)).toMatchObject({ solved: false, reward: 0, finish_reason: "abort" });
  });
});
