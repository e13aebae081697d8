// Every algorithm case on the masked multi-turn batch (TrainingSample.completion_mask), off-policy,
// against the independent PyTorch reference (scripts/reference/make_masked_algorithm_fixtures.py):
// advantages, loss, every metric the step reports (clip ratios, KL, rollout correction, lengths) and
// every LoRA gradient, with ratios, clipping and importance weights counted on the model's tokens
// only. The environment's old logprobs sit e^3 away from the policy's, so counting them anywhere fails.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { CausalLM, loadPeftAdapter, type LoraAdapter, scoreCompletions, useBackend } from "@lean-grpo/lm";
import { algorithmNamed } from "../src/algorithms/registry.js";
import { prepareBatch } from "../src/training/prepared-batch.js";
import { stepGradients } from "../src/training/step-gradients.js";
import { stepMetrics } from "../src/training/step-metrics.js";
import type { TrainingExample } from "../src/training/training-example.js";
import { ALGORITHM_FIXTURES, type AlgorithmCase, expectReferenceGradients } from "./support/algorithm-fixtures.js";
import { fixturePath } from "../../../packages/lm/test/support/fixtures.js";

interface MaskedAlgorithmFixture {
  model: string;
  adapter: string;
  samples: Array<{
    group_id: string;
    prompt: number[];
    completion: number[];
    mask: boolean[] | null;
    reward: number;
    truncated: boolean;
    old: number[];
    sampler: number[] | null;
  }>;
  completion_length: { mean: number; min: number; max: number };
  cases: Array<AlgorithmCase & { metrics: Record<string, number> }>;
}

const fixture = JSON.parse(await readFile(`${ALGORITHM_FIXTURES}masked.json`, "utf8")) as MaskedAlgorithmFixture;
const examples: TrainingExample[] = fixture.samples.map((s, i) => ({
  sampleId: `m${i}`,
  groupId: s.group_id,
  promptIds: s.prompt,
  completionIds: s.completion,
  completionMask: s.mask,
  samplerLogprobs: s.sampler,
  reward: s.reward,
  truncated: s.truncated,
}));

describe("GRPO-family losses on a masked multi-turn batch match PyTorch", () => {
  let model: CausalLM;
  let adapter: LoraAdapter;

  beforeAll(async () => {
    await useBackend("cpu");
    model = await CausalLM.load(fixturePath(fixture.model));
    adapter = await loadPeftAdapter(fixturePath(fixture.adapter), model.config);
  });
  afterAll(() => {
    adapter.dispose();
    model.dispose();
  });

  it.each(fixture.cases.map((c) => c.name))("%s: advantages, loss, metrics and every LoRA gradient on the model's tokens", async (name) => {
    const c = fixture.cases.find((x) => x.name === name)!;
    const settings = algorithmNamed(c.algorithm).resolve(c.config);
    const batch = prepareBatch(examples, settings, c.mode);
    const sequences = batch.rows.map((r) => ({ promptIds: r.example.promptIds, completionIds: r.example.completionIds }));
    const needsRef = c.mode === "rl" && (settings.beta !== 0 || settings.dpoCoef !== 0);
    const ref = needsRef ? (await scoreCompletions(model, sequences, { temperature: settings.temperature, adapter: null })).logprobs : null;
    const old = c.mode === "rl" ? batch.rows.map((r) => fixture.samples[r.index]!.old) : null;
    const result = stepGradients({ model, adapter, settings, batch, old, ref, microBatchTokens: 1 << 20 });
    try {
      if (c.advantages) c.advantages.forEach((a, i) => expect(batch.advantages[i]).toBeCloseTo(a, 12));
      // Some losses are sums of O(1) terms of both signs that cancel to ~1e-3: float32 rounding of the
      // terms is the floor there, so 1e-6 absolute is allowed beside 1e-5 relative (the gradients stay at 1e-5).
      expect(Math.abs(result.loss - c.loss), `loss ${result.loss} vs ${c.loss}`).toBeLessThan(1e-5 * Math.abs(c.loss) + 1e-6);
      const metrics = stepMetrics(examples, batch, [{ gradients: result, gradNorm: 0, learningRate: 0 }], old, 1, settings);
      expect(metrics.completion_length_mean).toBeCloseTo(fixture.completion_length.mean, 12);
      expect([metrics.completion_length_min, metrics.completion_length_max]).toEqual([
        fixture.completion_length.min,
        fixture.completion_length.max,
      ]);
      if (c.mode === "rl") {
        for (const key of ["clip_ratio_low_mean", "clip_ratio_high_mean", "clip_ratio_region_mean"]) {
          expect(metrics[key], key).toBeCloseTo(c.metrics[key]!, 12);
        }
        if (needsRef) expect(Math.abs(metrics.kl! - c.metrics.kl!) / Math.abs(c.metrics.kl!), "kl").toBeLessThan(1e-5);
        const expected = Object.entries(c.metrics).filter(([key]) => key.startsWith("rollout_corr_"));
        expect(expected.length).toBeGreaterThan(0);
        for (const [key, want] of expected) {
          expect(Math.abs(metrics[key]! - want), `${key}: ${metrics[key]} vs ${want}`).toBeLessThan(1e-6 + 1e-6 * Math.abs(want));
        }
      }
      await expectReferenceGradients(result.grads, c.gradients);
    } finally {
      tf.dispose([...result.grads.values()]);
    }
  });
});
