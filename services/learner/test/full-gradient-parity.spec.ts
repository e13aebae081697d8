// Full fine-tuning gradients (every base weight: embedding, tied or untied head, norms,
// q/k norms, biases, linear layers) against the independent PyTorch reference, on cpu and
// wasm. The loss is the LoRA parity fixture's (Σ w·logp + c·Σ entropy at temperature 0.7)
// without the adapter. Tolerance: per tensor, max |Δ| ≤ 1e-4 · max |reference|.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "@lean-grpo/lm";
import { completionLogprobs } from "@lean-grpo/lm";
import { loadCheckpoint } from "@lean-grpo/lm";
import { CausalLM } from "@lean-grpo/lm";
import { lossGradients } from "@lean-grpo/lm";
import { FullFineTuner } from "../src/training/full-fine-tuner.js";
import {
  alignedWeights,
  fixturePath,
  MODEL_NAMES,
  readFixtureTensors,
  readParity,
  sequencesOf,
  type Parity,
} from "../../../packages/lm/test/support/fixtures.js";

/** Row-major [rows, cols] to [cols, rows]. */
function transposed(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c]!;
  return out;
}

describe.each(["cpu", "wasm"] as const)("full fine-tuning gradients on %s match PyTorch", (backend) => {
  beforeAll(async () => {
    await useBackend(backend);
  });

  describe.each(MODEL_NAMES)("%s", (name) => {
    let model: CausalLM;
    let parity: Parity;

    beforeAll(async () => {
      parity = await readParity(name);
      model = await CausalLM.load(fixturePath(name), { trainable: true });
    });
    afterAll(() => model.dispose());

    it("gives the loss and the gradient of every checkpoint tensor within 1e-4 relative", async () => {
      const { temperature, entropy_coef: entropyCoef, token_weights: tokenWeights } = parity.gradient;
      const weights = alignedWeights(tokenWeights);
      const trainable = model.weights.trainable;
      const { value, grads } = lossGradients(
        () => {
          const scores = completionLogprobs(model, sequencesOf(parity), { temperature, adapter: null, chunkRows: 7 });
          return tf.add(tf.sum(tf.mul(scores.logprobs, weights)), tf.mul(tf.sum(scores.entropies), entropyCoef)) as tf.Scalar;
        },
        trainable.map((w) => w.variable),
      );
      weights.dispose();
      expect(Math.abs((await value.data())[0]! - parity.full_gradient.loss)).toBeLessThan(
        1e-4 * Math.max(1, Math.abs(parity.full_gradient.loss)),
      );

      const reference = await readFixtureTensors(parity.full_gradient.file);
      // One variable per checkpoint tensor: a tied head shares the embedding's and gets both gradients.
      expect(trainable.map((w) => w.name).sort()).toEqual([...reference.keys()].sort());
      for (const { name: key, variable, transposed: isTransposed } of trainable) {
        const grad = grads[variable.name];
        expect(grad, key).toBeDefined();
        const raw = (await grad!.data()) as Float32Array;
        const got = isTransposed ? transposed(raw, grad!.shape[0]!, grad!.shape[1]!) : raw;
        const expected = reference.get(key)!;
        let scale = 0;
        let worst = 0;
        expected.forEach((v, i) => {
          scale = Math.max(scale, Math.abs(v));
          worst = Math.max(worst, Math.abs(v - got[i]!));
        });
        expect(scale, `${key} has a zero reference gradient`).toBeGreaterThan(0);
        expect(worst / scale, key).toBeLessThan(1e-4);
      }
      tf.dispose([value, ...Object.values(grads)]);
    });
  });
});

describe("FullFineTuner", () => {
  beforeAll(async () => {
    await useBackend("cpu");
  });

  it("lowers the SFT loss on a fixed batch and exports weights that a frozen model loads to the same logprobs", async () => {
    const parity = await readParity("qwen2-tiny");
    const model = await CausalLM.load(fixturePath("qwen2-tiny"), { trainable: true });
    const examples = sequencesOf(parity).map((s, i) => ({
      sampleId: `s${i}`,
      groupId: `g${i}`,
      ...s,
      samplerLogprobs: null,
      reward: 0,
      truncated: false,
    }));
    const tuner = new FullFineTuner(model, {
      optimizer: {
        learningRate: 1e-2,
        maxGradNorm: 1,
        beta1: 0.9,
        beta2: 0.999,
        epsilon: 1e-8,
        weightDecay: 0,
        schedule: { name: "constant", warmupSteps: 0, totalSteps: 10 },
      },
      microBatchTokens: 16, // several micro-batches: accumulation is part of what is tested
    });
    const losses = Array.from({ length: 10 }, () => tuner.step(examples).loss);
    expect(losses[9]!).toBeLessThan(losses[0]! * 0.5);
    expect(tuner.updates).toBe(10);

    // The exported checkpoint tensors, loaded as a plain frozen model, score like the trained variables.
    const checkpoint = await loadCheckpoint(fixturePath("qwen2-tiny"));
    const before = new Map(checkpoint.weights);
    for (const [key, data] of tuner.weights()) checkpoint.weights.set(key, data);
    expect(checkpoint.weights.get("model.layers.0.mlp.up_proj.weight")).not.toEqual(before.get("model.layers.0.mlp.up_proj.weight"));
    const frozen = CausalLM.fromCheckpoint(checkpoint);
    expect(frozen.weights.trainable).toHaveLength(0);
    const score = (m: CausalLM) =>
      tf.tidy(() => completionLogprobs(m, sequencesOf(parity), { temperature: 1, adapter: null }).logprobs.arraySync());
    const trained = score(model);
    const reloaded = score(frozen);
    trained.forEach((row, i) => row.forEach((v, j) => expect(Math.abs(v - reloaded[i]![j]!)).toBeLessThan(1e-5)));
    tuner.dispose();
    model.dispose();
    frozen.dispose();
  });

  it("refuses a frozen model", async () => {
    const model = await CausalLM.load(fixturePath("qwen2-tiny"));
    expect(
      () =>
        new FullFineTuner(model, {
          optimizer: {
            learningRate: 1e-3,
            maxGradNorm: 1,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            weightDecay: 0,
            schedule: { name: "constant", warmupSteps: 0, totalSteps: 1 },
          },
          microBatchTokens: 1024,
        }),
    ).toThrow(/trainable model/);
    model.dispose();
  });
});
