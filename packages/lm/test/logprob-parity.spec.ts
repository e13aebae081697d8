// Completion-token logprobs and entropies against the independent PyTorch reference
// (scripts/reference/), on cpu and wasm: Qwen2 (tied, q/k/v bias, GQA), Qwen3 (q/k norm,
// head_dim×heads ≠ hidden, untied, sharded), Llama (llama3 RoPE, BF16/F16 weights), all
// on a left-padded batch, with the adapter on and off and at two temperatures.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { scoreCompletions } from "../src/logprobs/completion-logprobs.js";
import { loadPeftAdapter } from "../src/lora/peft-adapter.js";
import { CausalLM } from "../src/model/causal-lm.js";
import type { LoraAdapter } from "../src/lora/lora-adapter.js";
import { fixturePath, maxAbsDifference, MODEL_NAMES, readParity, sequencesOf, type Parity } from "./support/fixtures.js";

const TOLERANCE = 1e-4;

describe.each(["cpu", "wasm"] as const)("logprobs and entropies on %s match PyTorch", (backend) => {
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

    it.each([0, 1, 2])("case %i (adapter on/off, temperature)", async (index) => {
      const expected = parity.cases[index]!;
      const scores = await scoreCompletions(model, sequencesOf(parity), {
        temperature: expected.temperature,
        adapter: expected.adapter ? adapter : null,
      });
      expect(maxAbsDifference(scores.logprobs, expected.logprobs)).toBeLessThan(TOLERANCE);
      expect(maxAbsDifference(scores.entropies, expected.entropies)).toBeLessThan(TOLERANCE);
    });

    it("gives the same numbers whatever the chunk size of the vocabulary projection", async () => {
      const expected = parity.cases[2]!;
      for (const chunkRows of [1, 3, 1000]) {
        const scores = await scoreCompletions(model, sequencesOf(parity), { temperature: expected.temperature, adapter, chunkRows });
        expect(maxAbsDifference(scores.logprobs, expected.logprobs)).toBeLessThan(TOLERANCE);
        expect(maxAbsDifference(scores.entropies, expected.entropies)).toBeLessThan(TOLERANCE);
      }
    });

    it("scores a sequence alone the same as inside the padded batch", async () => {
      const expected = parity.cases[0]!;
      const sequences = sequencesOf(parity);
      for (const [row, sequence] of sequences.entries()) {
        const alone = await scoreCompletions(model, [sequence], { adapter });
        expect(maxAbsDifference(alone.logprobs, [expected.logprobs[row]!])).toBeLessThan(TOLERANCE);
      }
    });
  });

  it("leaves no tensors behind", async () => {
    const parity = await readParity("qwen2-tiny");
    const model = await CausalLM.load(fixturePath("qwen2-tiny"));
    const before = tf.memory().numTensors;
    await scoreCompletions(model, sequencesOf(parity), { temperature: 0.5 });
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
  });
});
