// Each algorithm's advantages, loss, metrics and LoRA gradients on fixed inputs against the
// independent PyTorch reference (scripts/reference/grpo_reference.py). Tolerance: 1e-5
// relative for the loss and, per tensor, max |Δ| ≤ 1e-5 · max |reference| for gradients.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { algorithmNamed } from "../src/algorithms/registry.js";
import { useBackend } from "@lean-grpo/lm";
import { scoreCompletions } from "@lean-grpo/lm";
import type { LoraAdapter } from "@lean-grpo/lm";
import { loadPeftAdapter } from "@lean-grpo/lm";
import { CausalLM } from "@lean-grpo/lm";
import { rolloutCorrectionMetrics } from "../src/algorithms/rollout-correction.js";
import { prepareBatch } from "../src/training/prepared-batch.js";
import { stepGradients } from "../src/training/step-gradients.js";
import {
  expectReferenceGradients,
  fixtureExamples,
  readAlgorithmFixture,
  relativeError,
  samplingMessage,
  type AlgorithmFixture,
} from "./support/algorithm-fixtures.js";
import { resolveSampling } from "../src/training/step-sampling.js";
import { fixturePath } from "../../../packages/lm/test/support/fixtures.js";

const fixture: AlgorithmFixture = await readAlgorithmFixture();

describe.each(["cpu", "wasm"] as const)("GRPO-family losses on %s match PyTorch", (backend) => {
  let model: CausalLM;
  let adapter: LoraAdapter;

  beforeAll(async () => {
    await useBackend(backend);
    model = await CausalLM.load(fixturePath(fixture.model));
    adapter = await loadPeftAdapter(fixturePath(fixture.adapter), model.config);
  });
  afterAll(() => {
    adapter.dispose();
    model.dispose();
  });

  async function gradientsOf(name: string, microBatchTokens: number) {
    const c = fixture.cases.find((x) => x.name === name)!;
    const settings = algorithmNamed(c.algorithm).resolve(c.config);
    const batch = prepareBatch(fixtureExamples(fixture), settings, c.mode);
    const sequences = batch.rows.map((r) => ({ promptIds: r.example.promptIds, completionIds: r.example.completionIds }));
    const needsRef = c.mode === "rl" && (settings.beta !== 0 || settings.dpoCoef !== 0);
    const ref = needsRef ? (await scoreCompletions(model, sequences, { temperature: settings.temperature, adapter: null })).logprobs : null;
    const old = c.mode === "rl" ? batch.rows.map((r) => fixture.samples[r.index]!.old) : null;
    return { c, batch, old, settings, result: stepGradients({ model, adapter, settings, batch, old, ref, microBatchTokens }) };
  }

  it.each(fixture.cases.map((c) => c.name))("%s: advantages, loss, metrics and every LoRA gradient", async (name) => {
    const { c, batch, old, settings, result } = await gradientsOf(name, 1 << 20);
    try {
      if (c.advantages) c.advantages.forEach((a, i) => expect(batch.advantages[i]).toBeCloseTo(a, 12));
      expect(Math.abs(result.loss - c.loss) / Math.abs(c.loss), `loss ${result.loss} vs ${c.loss}`).toBeLessThan(1e-5);
      const tokens = Math.max(1, batch.totals.liveTokens);
      if (c.mode === "rl") {
        expect(result.clipLow / tokens).toBeCloseTo(c.metrics.clip_ratio_low_mean!, 12);
        expect(result.clipHigh / tokens).toBeCloseTo(c.metrics.clip_ratio_high_mean!, 12);
        expect(result.clipRegion / tokens).toBeCloseTo(c.metrics.clip_ratio_region_mean!, 12);
        if (result.kl !== null) expect(Math.abs(result.kl / tokens - c.metrics.kl!) / Math.abs(c.metrics.kl!)).toBeLessThan(1e-5);
        // The rollout-correction diagnostics (and its masking/clipping decisions) against the reference's.
        const sampled = batch.rows.flatMap((r, i) => {
          const sampler = fixture.samples[r.index]!.sampler;
          return sampler ? [{ old: old![i]!, sampler }] : [];
        });
        const rollout = rolloutCorrectionMetrics(settings, sampled)!;
        const expected = Object.entries(c.metrics).filter(([key]) => key.startsWith("rollout_corr_"));
        expect(Object.keys(rollout).sort()).toEqual(expected.map(([key]) => key).sort());
        for (const [key, want] of expected)
          expect(Math.abs(rollout[key]! - want), `${key}: ${rollout[key]} vs ${want}`).toBeLessThan(1e-9 + 1e-9 * Math.abs(want));
      }
      await expectReferenceGradients(result.grads, c.gradients);
    } finally {
      tf.dispose([...result.grads.values()]);
    }
  });

  it.each(["grpo", "dapo", "dgpo"])("%s: micro-batches of 24 tokens accumulate the full-batch gradient", async (name) => {
    const whole = await gradientsOf(name, 1 << 20);
    const split = await gradientsOf(name, 24);
    try {
      expect(split.result.microBatches).toBeGreaterThan(1);
      expect(Math.abs(split.result.loss - whole.result.loss) / Math.abs(whole.result.loss)).toBeLessThan(1e-5);
      for (const [key, grad] of whole.result.grads) {
        const { error } = relativeError((await split.result.grads.get(key)!.data()) as Float32Array, (await grad.data()) as Float32Array);
        expect(error, key).toBeLessThan(1e-5);
      }
    } finally {
      tf.dispose([...whole.result.grads.values(), ...split.result.grads.values()]);
    }
  });

  // Scored under a sampling distribution (T, top-k, top-p): the learner's support cut and
  // its gradient against the reference's (a sort-based cut, reference_model.kept_support).
  it.each(fixture.logprob_cases.map((c) => c.name))("%s: logprobs and entropies under the sampling distribution", async (name) => {
    const c = fixture.logprob_cases.find((x) => x.name === name)!;
    const sequences = fixture.samples.map((s) => ({ promptIds: s.prompt, completionIds: s.completion }));
    const distribution = resolveSampling(samplingMessage(c.sampling), undefined, "sampling");
    const scores = await scoreCompletions(model, sequences, { ...distribution, adapter: c.adapter ? adapter : null });
    c.logprobs.forEach((row, i) => row.forEach((v, t) => expect(scores.logprobs[i]![t]).toBeCloseTo(v, 4)));
    c.entropies.forEach((row, i) => row.forEach((v, t) => expect(scores.entropies[i]![t]).toBeCloseTo(v, 4)));
  });

  it.each(fixture.sampling_cases.map((c) => c.name))(
    "%s: loss, metrics and every LoRA gradient under the sampling distribution",
    async (name) => {
      const c = fixture.sampling_cases.find((x) => x.name === name)!;
      const resolved = algorithmNamed(c.algorithm).resolve(c.config);
      const settings = { ...resolved, ...resolveSampling(samplingMessage(c.sampling), undefined, "header.sampling") };
      const batch = prepareBatch(fixtureExamples(fixture, c), settings, c.mode);
      const sequences = batch.rows.map((r) => ({ promptIds: r.example.promptIds, completionIds: r.example.completionIds }));
      const needsRef = settings.beta !== 0 || settings.dpoCoef !== 0;
      const ref = needsRef
        ? (
            await scoreCompletions(model, sequences, {
              temperature: settings.temperature,
              topK: settings.topK,
              topP: settings.topP,
              adapter: null,
            })
          ).logprobs
        : null;
      const old = batch.rows.map((r) => c.old[r.index]!);
      const result = stepGradients({ model, adapter, settings, batch, old, ref, microBatchTokens: 1 << 20 });
      try {
        c.advantages!.forEach((a, i) => expect(batch.advantages[i]).toBeCloseTo(a, 12));
        // GSPO's loss here is a sum of O(1) terms with advantages of both signs that cancel to ~1e-2:
        // float32 rounding of the terms (~1e-7 each) is the floor, so 1e-6 absolute is allowed beside 1e-5 relative.
        expect(Math.abs(result.loss - c.loss), `loss ${result.loss} vs ${c.loss}`).toBeLessThan(1e-5 * Math.abs(c.loss) + 1e-6);
        const tokens = Math.max(1, batch.totals.liveTokens);
        expect(result.clipLow / tokens).toBeCloseTo(c.metrics.clip_ratio_low_mean!, 12);
        expect(result.clipRegion / tokens).toBeCloseTo(c.metrics.clip_ratio_region_mean!, 12);
        await expectReferenceGradients(result.grads, c.gradients);
      } finally {
        tf.dispose([...result.grads.values()]);
      }
    },
  );
});
