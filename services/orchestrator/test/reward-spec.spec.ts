// The run's RewardSpec names the generation budget of the completions it scores; the reward
// service derives the length shaping from it.
import { describe, expect, it } from "vitest";
import { rewardSpec } from "../src/run/reward-spec.js";
import { RunConfigSchema } from "../src/run/run-config.js";

describe("rewardSpec", () => {
  it("carries the preset, the scorer overrides and the budget of one completion", () => {
    const config = RunConfigSchema.parse({
      training: { max_tokens: 48 },
      reward: { preset: "shaped", scorers: [{ name: "length", weight: 0.2, params: { cache_tokens: 8 } }] },
    });
    expect(rewardSpec(config)).toEqual({
      spec: { preset: "shaped", scorers: [{ name: "length", weight: 0.2, params: { cache_tokens: 8 } }], maxCompletionTokens: 48 },
    });
    // No preset or scorers: the reward service's own reward, still fitted to the budget.
    expect(rewardSpec(RunConfigSchema.parse({})).spec).toEqual({ preset: "", scorers: [], maxCompletionTokens: 64 });
  });

  it("in tactic mode, budgets the assembled proof: every turn's tokens, at most max_proof_steps turns", () => {
    const config = RunConfigSchema.parse({ training: { mode: "tactic", max_tokens: 32, max_proof_steps: 5 } });
    expect(rewardSpec(config).spec.maxCompletionTokens).toBe(160);
  });
});
