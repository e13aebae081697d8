// A Learner on the qwen2-tiny fixture model, for tests of steps, checkpoints and learning.
import { CausalLM } from "@lean-grpo/lm";
import { Learner, type LearnerOptions } from "../../src/training/learner.js";
import { fixturePath } from "../../../../packages/lm/test/support/fixtures.js";

export function learnerOptions(overrides: Partial<LearnerOptions> = {}): LearnerOptions {
  return {
    baseModel: "qwen2-tiny",
    lora: { rank: 4, alpha: 8, targetModules: ["q_proj", "v_proj", "o_proj", "down_proj"], dropout: 0, useRslora: false },
    optimizer: {
      learningRate: 1e-2,
      beta1: 0.9,
      beta2: 0.999,
      epsilon: 1e-8,
      weightDecay: 0.01,
      maxGradNorm: 1,
      schedule: { name: "constant", warmupSteps: 0, totalSteps: 100 },
    },
    microBatchTokens: 4096,
    seed: 7,
    keepVersions: 3,
    ...overrides,
  };
}

export async function loadTinyModel(): Promise<CausalLM> {
  return CausalLM.load(fixturePath("qwen2-tiny"));
}

export async function tinyLearner(model: CausalLM, overrides: Partial<LearnerOptions> = {}): Promise<Learner> {
  return new Learner(model, learnerOptions(overrides));
}
