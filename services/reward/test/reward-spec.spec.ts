import { describe, expect, it } from "vitest";
import { applyOverrides, presetReward } from "../src/reward/reward-spec.js";
import { completion, mathProblem } from "./messages.js";
import { rewardOf, scoreOne } from "./scoring.js";

const override = (name: string, weight: number | undefined, params: Record<string, unknown> = {}) => ({
  name,
  params,
  field: "spec.scorers[0]",
  paramsField: "spec.scorers[0].params",
  ...(weight === undefined ? {} : { weight }),
});

describe("reward spec", () => {
  it("resolves presets with full parameter values, in registry order", () => {
    const shaped = presetReward("shaped", "spec.preset");
    expect(shaped.scorers.map((s) => [s.scorer.name, s.weight])).toEqual([
      ["lean_proof", 1],
      ["math_answer", 1],
      ["format", 0.1],
      ["length", 0.5],
    ]);
    expect(shaped.scorers[0]!.params).toEqual({ mode: "shaped", max_partial: 0.3 });
    expect(shaped.scorers[3]!.params).toEqual({ max_tokens: 4096, cache_tokens: 1024, truncated: -1, unit: "tokens" });
  });

  it("replaces the weight and merges parameters of a named scorer, and adds new ones with weight 1", () => {
    const base = presetReward("shaped", "spec.preset");
    const reward = applyOverrides(base, [override("length", 0.2, { max_tokens: 8192 }), override("efficiency", undefined)]);
    const length = reward.scorers.find((s) => s.scorer.name === "length")!;
    expect(length.weight).toBe(0.2);
    // cache_tokens was not chosen: it stays a quarter of max_tokens (length.ts derive).
    expect(length.params).toMatchObject({ max_tokens: 8192, cache_tokens: 2048 });
    expect(reward.scorers.find((s) => s.scorer.name === "efficiency")?.weight).toBe(1);
    expect(reward.scorers.find((s) => s.scorer.name === "lean_proof")?.params).toEqual({ mode: "shaped", max_partial: 0.3 });
  });

  it.each([
    [() => presetReward("gentle", "spec.preset"), 'spec.preset: unknown preset "gentle"; accepted: binary, shaped, lenient, strict'],
    [
      () => applyOverrides(presetReward("binary", "p"), [override("brevity", 1)]),
      'spec.scorers[0].name: unknown scorer "brevity"; accepted: lean_proof, math_answer, format, length, efficiency, difficulty, domain',
    ],
    [
      () => applyOverrides(presetReward("binary", "p"), [override("format", -0.5)]),
      "spec.scorers[0].weight: -0.5 is not accepted; expected a finite number >= 0",
    ],
    [() => applyOverrides(presetReward("binary", "p"), [override("format", Number.NaN)]), "spec.scorers[0].weight: NaN is not accepted"],
    [
      () => applyOverrides(presetReward("binary", "p"), [override("length", 1, { max_token: 10 })]),
      'spec.scorers[0].params: unknown parameter "max_token" for scorer length; accepted: max_tokens, cache_tokens, truncated, unit',
    ],
    [
      () => applyOverrides(presetReward("binary", "p"), [override("length", 1, { unit: "bytes" })]),
      'spec.scorers[0].params.unit: "bytes" is not accepted; expected one of "tokens", "characters"',
    ],
    [
      () => applyOverrides(presetReward("binary", "p"), [override("length", 1, { max_tokens: 1.5 })]),
      "spec.scorers[0].params.max_tokens: 1.5 is not accepted; expected an integer in [1, ∞)",
    ],
    [
      () => applyOverrides(presetReward("binary", "p"), [override("math_answer", 1, { correct: -2 })]),
      "spec.scorers[0].params: scorer math_answer: correct (-2) must be greater than wrong (0) and no_answer (0), or solving would not pay",
    ],
    [
      () => applyOverrides(presetReward("binary", "p"), [override("format", 1), override("format", 2)]),
      'spec.scorers[0].name: scorer "format" is named twice',
    ],
  ])("reports %#", (resolve, message) => {
    expect(resolve).toThrow(message);
  });

  it("keeps a weight of 0: the scorer is reported and adds nothing", () => {
    const reward = applyOverrides(presetReward("shaped", "p"), [override("format", 0)]);
    expect(reward.scorers.find((s) => s.scorer.name === "format")?.weight).toBe(0);
  });
});

describe("a reward with no scorer for the task", () => {
  it("is INVALID_ARGUMENT rather than a silent 0", async () => {
    await expect(scoreOne(rewardOf(["lean_proof", 1]), mathProblem("4"), completion("\\boxed{4}"))).rejects.toThrow(
      'spec: no scorer of reward "test" (lean_proof) applies to a math answer task; add one that does (lean_proof or math_answer)',
    );
  });
});
