// LoRA gradients against the independent PyTorch reference, on cpu and wasm. The loss is
// the fixture's: Σ w·logp + c·Σ entropy over completion tokens at temperature 0.7, so the
// gradient flows through the custom logprob/entropy op, every layer, and every target.
// Tolerance: per tensor, max |Δ| ≤ 1e-4 · max |reference|.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { completionLogprobs } from "../src/logprobs/completion-logprobs.js";
import type { LoraAdapter } from "../src/lora/lora-adapter.js";
import { loadPeftAdapter } from "../src/lora/peft-adapter.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { lossGradients } from "../src/gradients/adapter-gradients.js";
import { alignedWeights, fixturePath, MODEL_NAMES, readFixtureTensors, readParity, sequencesOf, type Parity } from "./support/fixtures.js";

describe.each(["cpu", "wasm"] as const)("LoRA gradients on %s match PyTorch", (backend) => {
  beforeAll(async () => {
    await useBackend(backend);
  });

  describe.each(MODEL_NAMES)("%s", (name) => {
    let model: CausalLM;
    let adapter: LoraAdapter;
    let parity: Parity;

    beforeAll(async () => {
      parity = await readParity(name);
      model = await CausalLM.load(fixturePath(name));
      adapter = await loadPeftAdapter(fixturePath(`${name}-lora`), model.config);
    });
    afterAll(() => {
      adapter.dispose();
      model.dispose();
    });

    it("gives the loss and every A and B gradient within 1e-4 relative", async () => {
      const { temperature, entropy_coef: entropyCoef, token_weights: tokenWeights, file } = parity.gradient;
      const weights = alignedWeights(tokenWeights);
      const { value, grads } = lossGradients(() => {
        const scores = completionLogprobs(model, sequencesOf(parity), { temperature, adapter, chunkRows: 7 });
        return tf.add(tf.sum(tf.mul(scores.logprobs, weights)), tf.mul(tf.sum(scores.entropies), entropyCoef)) as tf.Scalar;
      }, adapter.variables());
      weights.dispose();
      expect(Math.abs((await value.data())[0]! - parity.gradient.loss)).toBeLessThan(1e-4 * Math.max(1, Math.abs(parity.gradient.loss)));

      const reference = await readFixtureTensors(file);
      expect(Object.keys(grads)).toHaveLength(reference.size);
      for (const [variableName, grad] of Object.entries(grads)) {
        const key = adapter.peftKeyOfVariable(variableName)!;
        const expected = reference.get(key);
        expect(expected, key).toBeDefined();
        const transposed = tf.transpose(grad); // PEFT layout: A [r, in], B [out, r]
        const got = await transposed.data();
        transposed.dispose();
        let scale = 0;
        let worst = 0;
        expected!.forEach((v, i) => {
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
