// Learning, for real: on the tiny fixture model, a toy verifiable task (reward = the fraction
// of completion tokens with an id below 24, a quarter of the vocabulary) and fixed seeds,
// each algorithm raises the mean reward of fresh samples within 8 steps. Rollouts come from
// the learner core's sampler under the current adapter, with the sampler's logprobs, as the
// inference service would send them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALGORITHM_NAMES } from "../src/algorithms/registry.js";
import { useBackend } from "@lean-grpo/lm";
import { generate } from "@lean-grpo/lm";
import type { CausalLM } from "@lean-grpo/lm";
import type { Learner } from "../src/training/learner.js";
import type { TrainingExample } from "../src/training/training-example.js";
import { learnerOptions, loadTinyModel, tinyLearner } from "./support/learner-setup.js";

const PROMPTS = [
  [5, 17, 33],
  [60, 61, 62],
  [3, 9, 44],
  [20, 70, 2],
];
const reward = (ids: readonly number[]) => ids.filter((t) => t < 24).length / ids.length;
const STEPS = 8;

async function rollout(model: CausalLM, learner: Learner, seed: number, perPrompt: number): Promise<TrainingExample[]> {
  const examples: TrainingExample[] = [];
  for (const [p, prompt] of PROMPTS.entries()) {
    const sequences = await generate(model, Array(perPrompt).fill(prompt), {
      maxNewTokens: 4,
      temperature: 1,
      seed: seed * 100 + p,
      adapter: learner.policy,
      stopTokenIds: [],
    });
    sequences.forEach((s, i) =>
      examples.push({
        sampleId: `${seed}-${p}-${i}`,
        groupId: `prompt-${p}`,
        promptIds: prompt,
        completionIds: s.tokenIds,
        samplerLogprobs: s.logprobs,
        reward: reward(s.tokenIds),
        truncated: s.finishReason === "length",
      }),
    );
  }
  return examples;
}

const meanReward = (examples: readonly TrainingExample[]) => examples.reduce((s, e) => s + e.reward, 0) / examples.length;

describe("each algorithm learns the toy task", () => {
  let model: CausalLM;
  beforeAll(async () => {
    await useBackend("wasm");
    model = await loadTinyModel();
  });
  afterAll(() => model.dispose());

  it.each(ALGORITHM_NAMES)("%s raises the mean reward of fresh samples within 8 steps", async (algorithm) => {
    const learner = await tinyLearner(model, {
      optimizer: { ...learnerOptions().optimizer, learningRate: 3e-2, weightDecay: 0 },
    });
    try {
      const before = meanReward(await rollout(model, learner, 999, 16));
      // Dr. GRPO's constant normaliser is the generation budget: 4 tokens here.
      const algorithmConfig = algorithm === "drgrpo" ? { max_completion_length: 4 } : {};
      for (let step = 1; step <= STEPS; step++) {
        const examples = await rollout(model, learner, step, 8);
        const result = await learner.trainStep({
          algorithm,
          algorithmConfig,
          mode: "rl",
          examples,
          step,
          expectedSamples: examples.length,
          numGenerations: 8,
        });
        expect(result.step).toBe(step);
        expect(Number.isFinite(result.metrics.loss)).toBe(true);
      }
      const after = meanReward(await rollout(model, learner, 999, 16));
      expect(before).toBeLessThan(0.35);
      expect(after, `${algorithm}: ${before} → ${after}`).toBeGreaterThan(before + 0.3);
    } finally {
      learner.dispose();
    }
  });

  it("SFT on completions of low ids raises their share", async () => {
    const learner = await tinyLearner(model);
    try {
      const before = meanReward(await rollout(model, learner, 999, 16));
      const targets = PROMPTS.map((prompt, p) => ({
        sampleId: `t${p}`,
        groupId: `prompt-${p}`,
        promptIds: prompt,
        completionIds: [3 + p, 10, 17 + p, 4],
        samplerLogprobs: null,
        reward: 0,
        truncated: false,
      }));
      for (let step = 1; step <= STEPS; step++) {
        await learner.trainStep({
          algorithm: "grpo",
          algorithmConfig: {},
          mode: "sft",
          examples: targets,
          step: 0,
          expectedSamples: 0,
          numGenerations: 0,
        });
      }
      expect(meanReward(await rollout(model, learner, 999, 16))).toBeGreaterThan(before + 0.3);
    } finally {
      learner.dispose();
    }
  });
});
