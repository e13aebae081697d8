// What a step scores and under which distribution: the sampling distribution of the header
// reaches every logprob (sampler and learner agree at T = 0.7, top-p 0.9), the "old" pass is
// skipped with one update (μ = 1), importance weight or not, without changing the update,
// replays and an importance weight under LoRA dropout keep it, and LoRA dropout no longer
// pushes GSPO's sequence ratio out of its 3e-4 band.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { generate, useBackend, type CausalLM } from "@lean-grpo/lm";
import type { Learner } from "../src/training/learner.js";
import type { TrainingExample } from "../src/training/training-example.js";
import { loadTinyModel, tinyLearner } from "./support/learner-setup.js";

const PROMPTS = [
  [5, 17, 33],
  [60, 61, 62],
];
const SAMPLING = { temperature: 0.7, topK: 0, topP: 0.9 };

async function rollout(model: CausalLM, learner: Learner, sampling = SAMPLING): Promise<TrainingExample[]> {
  const examples: TrainingExample[] = [];
  for (const [p, prompt] of PROMPTS.entries()) {
    const sequences = await generate(model, Array(4).fill(prompt), {
      maxNewTokens: 5,
      ...sampling,
      seed: 11 + p,
      adapter: learner.policy,
      stopTokenIds: [],
    });
    sequences.forEach((s, i) =>
      examples.push({
        sampleId: `${p}-${i}`,
        groupId: `g${p}`,
        promptIds: prompt,
        completionIds: s.tokenIds,
        samplerLogprobs: s.logprobs,
        reward: s.tokenIds.filter((t) => t < 48).length / s.tokenIds.length + i * 0.01,
        truncated: false,
      }),
    );
  }
  return examples;
}

const step = (examples: TrainingExample[], algorithm: string, algorithmConfig: Record<string, unknown>, sampling?: typeof SAMPLING) => ({
  algorithm,
  algorithmConfig,
  mode: "rl" as const,
  examples,
  step: 0,
  expectedSamples: 0,
  numGenerations: 0,
  sampling,
});

async function adapterValues(learner: Learner): Promise<Float32Array[]> {
  return Promise.all(learner.policy.variables().map(async (v) => (await v.data()) as Float32Array));
}

describe("a step's logprob passes and their distribution", () => {
  let model: CausalLM;
  beforeAll(async () => {
    await useBackend("cpu");
    model = await loadTinyModel();
  });
  afterAll(() => model.dispose());

  it("scores under header.sampling: the sampler's logprobs at T = 0.7, top-p 0.9 agree with the learner's", async () => {
    const learner = await tinyLearner(model);
    const examples = await rollout(model, learner);
    const matched = await learner.trainStep(step(examples, "grpo", { importance_sampling_cap: 2 }, SAMPLING));
    expect(matched.metrics.sampling_logp_difference_mean).toBeLessThan(1e-4);
    // The same samples scored at T = 1 over the full vocabulary (what the header's absence means).
    const other = await tinyLearner(model);
    const mismatched = await other.trainStep(step(examples, "grpo", { importance_sampling_cap: 2 }));
    expect(mismatched.metrics.sampling_logp_difference_mean).toBeGreaterThan(1e-2);
    learner.dispose();
    other.dispose();
  });

  it("refuses an algorithm_config.temperature that disagrees with header.sampling, naming both", async () => {
    const learner = await tinyLearner(model);
    const examples = await rollout(model, learner);
    await expect(learner.trainStep(step(examples, "grpo", { temperature: 1 }, SAMPLING))).rejects.toThrow(
      /algorithm_config\.temperature is 1 but header\.sampling\.temperature is 0\.7/,
    );
    // Equal, or only in algorithm_config (an older caller), is accepted.
    await expect(learner.trainStep(step(examples, "grpo", { temperature: 0.7 }, SAMPLING))).resolves.toMatchObject({ step: 1 });
    learner.dispose();
  });

  it("on-policy (μ = 1, no importance weight) skips the old pass and gives the same update", async () => {
    const a = await tinyLearner(model);
    const b = await tinyLearner(model, { formerStep: true });
    const examples = (await rollout(model, a)).map((e) => ({ ...e, samplerLogprobs: null }));
    const passesA = vi.spyOn(a, "scoreInChunks");
    const passesB = vi.spyOn(b, "scoreInChunks");
    // drgrpo: β = 0, so no reference pass either. B scores the old policy in a pass of its own.
    const onPolicy = await a.trainStep(step(examples, "drgrpo", {}, SAMPLING));
    const withPass = await b.trainStep(step(examples, "drgrpo", {}, SAMPLING));
    expect(passesA).toHaveBeenCalledTimes(0);
    expect(passesB).toHaveBeenCalledTimes(1);
    expect(onPolicy.metrics.loss).toBeCloseTo(withPass.metrics.loss!, 6);
    expect(onPolicy.metrics.grad_norm).toBeGreaterThan(0);
    const [wa, wb] = [await adapterValues(a), await adapterValues(b)];
    wa.forEach((values, i) => values.forEach((v, k) => expect(v).toBeCloseTo(wb[i]![k]!, 6)));
    a.dispose();
    b.dispose();
  });

  it("an async step's importance weight (one update, no dropout) reads the differentiated pass: no old pass, the same update and weights", async () => {
    const a = await tinyLearner(model);
    const b = await tinyLearner(model, { formerStep: true });
    // Sampler logprobs off by ±0.1 on two tokens in three, as a policy one update behind gives.
    const examples = (await rollout(model, a)).map((e) => ({
      ...e,
      samplerLogprobs: e.samplerLogprobs!.map((l, t) => l + 0.1 * ((t % 3) - 1)),
    }));
    const passesA = vi.spyOn(a, "scoreInChunks");
    const passesB = vi.spyOn(b, "scoreInChunks");
    // grpo: β = 0.04, so both score the reference: B in a pass of its own, A inside each
    // micro-batch of the differentiated pass; only B scores the old policy as well.
    const config = { importance_sampling_cap: 1.05, importance_sampling_min: 0.95 };
    const skipped = await a.trainStep(step(examples, "grpo", config, SAMPLING));
    const scored = await b.trainStep(step(examples, "grpo", config, SAMPLING));
    expect(passesA).toHaveBeenCalledTimes(0);
    expect(passesB).toHaveBeenCalledTimes(2);
    // The weights are live (some ratios outside [0.95, 1.05] are truncated), and agree.
    expect(
      scored.metrics.rollout_corr_rollout_is_ratio_fraction_high! + scored.metrics.rollout_corr_rollout_is_ratio_fraction_low!,
    ).toBeGreaterThan(0);
    for (const key of [
      "loss",
      "grad_norm",
      "kl",
      "rollout_corr_kl",
      "rollout_corr_rollout_is_eff_sample_size",
      "rollout_corr_rollout_is_ratio_fraction_high",
    ]) {
      expect(skipped.metrics[key], key).toBeCloseTo(scored.metrics[key]!, 6);
    }
    const [wa, wb] = [await adapterValues(a), await adapterValues(b)];
    wa.forEach((values, i) => values.forEach((v, k) => expect(v).toBeCloseTo(wb[i]![k]!, 6)));
    a.dispose();
    b.dispose();
  });

  it("replays with β ≠ 0 keep the reference scored in the first update's micro-batches: every update's KL as the former step's", async () => {
    const a = await tinyLearner(model, { microBatchTokens: 40 });
    const b = await tinyLearner(model, { microBatchTokens: 40, formerStep: true });
    const examples = await rollout(model, a);
    const config = { num_iterations: 3, beta: 0.5 };
    const now = await a.trainStep(step(examples, "grpo", config, SAMPLING));
    const former = await b.trainStep(step(examples, "grpo", config, SAMPLING));
    expect(now.metrics.optimizer_updates).toBe(3);
    expect(now.metrics.micro_batches).toBeGreaterThan(1);
    // The KL of updates 2 and 3 is against the kept reference (with none, the metric would be missing).
    expect(now.metrics.kl).toBeGreaterThan(0);
    // The former step cuts its micro-batches in arrival order: the same sums in another order.
    for (const key of ["loss", "grad_norm", "kl"]) expect(now.metrics[key], key).toBeCloseTo(former.metrics[key]!, 6);
    const [wa, wb] = [await adapterValues(a), await adapterValues(b)];
    wa.forEach((values, i) => values.forEach((v, k) => expect(v).toBeCloseTo(wb[i]![k]!, 6)));
    a.dispose();
    b.dispose();
  });

  it("with LoRA dropout the importance weight keeps its old pass (the differentiated pass has dropout)", async () => {
    const learner = await tinyLearner(model, {
      lora: { rank: 4, alpha: 8, targetModules: ["q_proj", "v_proj", "o_proj", "down_proj"], dropout: 0.3, useRslora: false },
    });
    const examples = await rollout(model, learner);
    const passes = vi.spyOn(learner, "scoreInChunks");
    await learner.trainStep(step(examples, "drgrpo", { importance_sampling_cap: 2 }, SAMPLING));
    expect(passes).toHaveBeenCalledTimes(1);
    learner.dispose();
  });

  it("replays (num_iterations 3) keep one old pass from before the first update, and make three updates", async () => {
    const learner = await tinyLearner(model);
    const examples = await rollout(model, learner);
    const passes = vi.spyOn(learner, "scoreInChunks");
    const result = await learner.trainStep(step(examples, "drgrpo", { num_iterations: 3, epsilon: 0.01 }, SAMPLING));
    expect(passes).toHaveBeenCalledTimes(1);
    expect(result.metrics.optimizer_updates).toBe(3);
    // Updates 2 and 3 see ratios away from 1: with a 0.01 band some tokens are clipped.
    expect(result.metrics.clip_ratio_region_mean).toBeGreaterThan(0);
    learner.dispose();
  });

  it("GSPO with LoRA dropout: the ratio of an on-policy step is exactly 1, inside the 3e-4 band", async () => {
    const learner = await tinyLearner(model, {
      lora: { rank: 4, alpha: 8, targetModules: ["q_proj", "v_proj", "o_proj", "down_proj"], dropout: 0.3, useRslora: false },
    });
    const examples = (await rollout(model, learner)).map((e) => ({ ...e, samplerLogprobs: null }));
    const result = await learner.trainStep(step(examples, "gspo", {}, SAMPLING));
    // An old pass without dropout would give sequence ratios ~1 ± 1e-2 and clip most sequences.
    expect(result.metrics.clip_ratio_region_mean).toBe(0);
    expect(result.metrics.grad_norm).toBeGreaterThan(0);
    learner.dispose();
  });

  it("GSPO with the importance weight: the weight multiplies each token's term (TRL), capped", async () => {
    const learner = await tinyLearner(model);
    const examples = await rollout(model, learner);
    const capped = await learner.trainStep(step(examples, "gspo", { importance_sampling_cap: 2 }, SAMPLING));
    expect(capped.metrics.sampling_logp_difference_mean).toBeLessThan(1e-4);
    expect(Number.isFinite(capped.metrics.loss)).toBe(true);
    learner.dispose();
  });
});
