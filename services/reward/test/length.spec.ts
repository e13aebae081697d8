import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FinishReason } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { overlongPenalty } from "../src/scorers/length.js";
import { completion, mathProblem } from "./messages.js";
import { component, rewardOf, scoreOne } from "./scoring.js";

interface OverlongCase {
  length: number;
  max_tokens: number;
  cache_tokens: number;
  expected: number;
}

// Computed by fixtures/make_fixtures.py, written as TRL's get_soft_overlong_punishment.
const reference: OverlongCase[] = JSON.parse(readFileSync(new URL("./fixtures/overlong-penalty.json", import.meta.url), "utf8"));

describe("DAPO overlong penalty", () => {
  it("matches the reference, including TRL's test vector (L=100, cache=20, |y|=90 gives -0.5)", () => {
    expect(reference[0]).toEqual({ length: 90, max_tokens: 100, cache_tokens: 20, expected: -0.5 });
    for (const c of reference) {
      expect(overlongPenalty(c.length, c.max_tokens, c.cache_tokens), JSON.stringify(c)).toBeCloseTo(c.expected, 12);
    }
  });

  it("counts the completion's token ids through the scorer", async () => {
    const reward = rewardOf(["math_answer", 1], ["length", 1, { max_tokens: 100, cache_tokens: 20 }]);
    const text = `\\boxed{4}${"x".repeat(81)}`; // 90 characters, one token each
    const result = await scoreOne(reward, mathProblem("4"), completion(text));
    expect(component(result, "length")).toMatchObject({ value: -0.5, detail: "90 tokens (soft limit 80, hard 100)" });
    expect(result.reward).toBeCloseTo(0.5, 12);
  });

  it("gives `truncated` to a completion the sampler cut off, whatever its length", async () => {
    const reward = rewardOf(["math_answer", 1], ["length", 1, { truncated: -0.75 }]);
    const result = await scoreOne(reward, mathProblem("4"), completion("\\boxed{4}", { finishReason: FinishReason.LENGTH }));
    expect(component(result, "length")).toMatchObject({ value: -0.75, detail: "truncated by the sampler (finish_reason LENGTH)" });
  });

  it("counts code points with unit characters", async () => {
    const reward = rewardOf(["math_answer", 1], ["length", 1, { max_tokens: 12, cache_tokens: 4, unit: "characters" }]);
    // 10 code points (11 UTF-16 units): (8 - 10) / 4.
    const result = await scoreOne(reward, mathProblem("4"), completion("\\boxed{4}\u{1d465}", { tokenIds: [] }));
    expect(component(result, "length").value).toBe(-0.5);
  });

  it("says which field is missing when it must count tokens and has none", async () => {
    const reward = rewardOf(["math_answer", 1], ["length", 1]);
    await expect(scoreOne(reward, mathProblem("4"), completion("\\boxed{4}", { tokenIds: [] }))).rejects.toThrow(
      'completions[0].token_ids is empty but the length scorer counts tokens (length.unit "tokens")',
    );
  });

  it("rejects a soft zone longer than max_tokens", () => {
    expect(() => rewardOf(["length", 1, { max_tokens: 100, cache_tokens: 200 }])).toThrow(
      "scorers[0].params: scorer length: cache_tokens (200) must be at most max_tokens (100)",
    );
  });
});
