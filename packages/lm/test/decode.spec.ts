// Decoding: greedy tokens with the KV cache equal PyTorch's greedy tokens (computed by full
// recomputation) and our own full recomputation; seeded sampling is reproducible; the
// sampler's logprobs are what the learner computes for the same tokens.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { generate } from "../src/decode/generate.js";
import { ModelInputError } from "../src/errors.js";
import { scoreCompletions } from "../src/logprobs/completion-logprobs.js";
import type { LoraAdapter } from "../src/lora/lora-adapter.js";
import { loadPeftAdapter } from "../src/lora/peft-adapter.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { fixturePath, maxAbsDifference, MODEL_NAMES, readParity, type Parity } from "./support/fixtures.js";

describe.each(["cpu", "wasm"] as const)("greedy decoding on %s", (backend) => {
  beforeAll(async () => {
    await useBackend(backend);
  });

  describe.each(MODEL_NAMES)("%s", (name) => {
    let model: CausalLM;
    let parity: Parity;
    beforeAll(async () => {
      model = await CausalLM.load(fixturePath(name));
      parity = await readParity(name);
    });
    afterAll(() => model.dispose());

    it("gives PyTorch's greedy tokens with the KV cache, alone and as a left-padded batch", async () => {
      const prompts = parity.greedy.map((g) => g.prompt);
      const options = { maxNewTokens: 6, temperature: 0, stopTokenIds: [] };
      const batched = await generate(model, prompts, options);
      expect(batched.map((s) => s.tokenIds)).toEqual(parity.greedy.map((g) => g.tokens));
      for (const [row, prompt] of prompts.entries()) {
        const [alone] = await generate(model, [prompt], options);
        expect(alone!.tokenIds).toEqual(parity.greedy[row]!.tokens);
      }
    });

    it("gives the same tokens and logprobs with the cache as by full recomputation", async () => {
      const prompts = [...parity.greedy.map((g) => g.prompt), [7]];
      const cached = await generate(model, prompts, { maxNewTokens: 8, temperature: 0, stopTokenIds: [] });
      const recomputed = await generate(model, prompts, { maxNewTokens: 8, temperature: 0, stopTokenIds: [], useKvCache: false });
      expect(cached.map((s) => s.tokenIds)).toEqual(recomputed.map((s) => s.tokenIds));
      expect(
        maxAbsDifference(
          cached.map((s) => s.logprobs),
          recomputed.map((s) => s.logprobs),
        ),
      ).toBeLessThan(1e-4);
    });
  });
});

describe("sampling", () => {
  let model: CausalLM;
  let adapter: LoraAdapter;
  const prompts = [[5, 17, 33], [70, 2, 9, 41, 88, 13], [3]];

  beforeAll(async () => {
    await useBackend("cpu");
    model = await CausalLM.load(fixturePath("qwen2-tiny"));
    adapter = await loadPeftAdapter(fixturePath("qwen2-tiny-lora"), model.config);
  });
  afterAll(() => {
    adapter.dispose();
    model.dispose();
  });

  it("is reproducible with a seed, and another seed gives other tokens", async () => {
    const options = { maxNewTokens: 10, temperature: 1, seed: 1234, stopTokenIds: [], adapter };
    const first = await generate(model, prompts, options);
    expect(await generate(model, prompts, options)).toEqual(first);
    const other = await generate(model, prompts, { ...options, seed: 99 });
    expect(other.map((s) => s.tokenIds)).not.toEqual(first.map((s) => s.tokenIds));
  });

  it("draws a row's tokens independently of the rest of the batch", async () => {
    const options = { maxNewTokens: 10, temperature: 0.8, topP: 0.9, seed: 7, stopTokenIds: [] };
    const batched = await generate(model, prompts, options);
    const [alone] = await generate(model, [prompts[0]!], options);
    expect(alone!.tokenIds).toEqual(batched[0]!.tokenIds);
  });

  it("reports the logprobs the learner computes for the sampled tokens under the same distribution (T, top-k, top-p)", async () => {
    for (const [temperature, topK, topP] of [
      [1, 0, 1],
      [0.6, 20, 1],
      [0.7, 0, 0.9],
      [0.7, 30, 0.8],
    ] as const) {
      const sampled = await generate(model, prompts, { maxNewTokens: 8, temperature, topK, topP, seed: 3, stopTokenIds: [], adapter });
      const scored = await scoreCompletions(
        model,
        prompts.map((p, i) => ({ promptIds: p, completionIds: sampled[i]!.tokenIds })),
        { temperature, topK, topP, adapter },
      );
      expect(
        maxAbsDifference(
          sampled.map((s) => s.logprobs),
          scored.logprobs,
        ),
      ).toBeLessThan(1e-4);
    }
  });

  it("stops at a stop token (kept as the last token) or at max tokens", async () => {
    const [greedy] = await generate(model, [prompts[1]!], { maxNewTokens: 5, temperature: 0, stopTokenIds: [] });
    expect(greedy).toMatchObject({ finishReason: "length" });
    expect(greedy!.tokenIds).toHaveLength(5);
    const stopAt = greedy!.tokenIds[2]!;
    const [stopped] = await generate(model, [prompts[1]!], { maxNewTokens: 5, temperature: 0, stopTokenIds: [stopAt] });
    expect(stopped!.finishReason).toBe("stop");
    expect(stopped!.tokenIds).toEqual(greedy!.tokenIds.slice(0, greedy!.tokenIds.indexOf(stopAt) + 1));
  });

  it("stops at the model's eos ids by default", async () => {
    const results = await generate(model, prompts, { maxNewTokens: 40, temperature: 1.5, seed: 5 });
    for (const result of results) {
      const eos = result.tokenIds.indexOf(2); // qwen2-tiny's eos_token_id
      if (eos >= 0) {
        expect(result.finishReason).toBe("stop");
        expect(eos).toBe(result.tokenIds.length - 1);
      } else {
        expect(result.tokenIds).toHaveLength(40);
      }
    }
  });

  it("leaves no tensors behind, also when aborted", async () => {
    const before = tf.memory().numTensors;
    await generate(model, prompts, { maxNewTokens: 4, seed: 1, adapter });
    expect(tf.memory().numTensors).toBe(before);
    const controller = new AbortController();
    const pending = generate(model, prompts, { maxNewTokens: 50, seed: 1, stopTokenIds: [], signal: controller.signal });
    controller.abort(new Error("client cancelled"));
    await expect(pending).rejects.toThrow("client cancelled");
    expect(tf.memory().numTensors).toBe(before);
  });

  const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
    ["a negative temperature", { temperature: -1 }, /temperature -1 must be a number >= 0/],
    ["top_p 0", { topP: 0 }, /top_p 0 must be in \(0, 1\]/],
    ["a fractional top_k", { topK: 1.5 }, /top_k 1.5 must be an integer >= 0/],
    ["max tokens 0", { maxNewTokens: 0 }, /max_tokens 0 must be an integer >= 1/],
    [
      "more tokens than the context",
      { maxNewTokens: 200 },
      /prompt plus max_tokens is 206 tokens; the model's context \(max_position_embeddings\) is 128/,
    ],
  ];
  it.each(invalid)("refuses %s", async (_name, change, message) => {
    const options = { maxNewTokens: 4, ...change } as Parameters<typeof generate>[2];
    await expect(generate(model, prompts, options)).rejects.toThrow(ModelInputError);
    await expect(generate(model, prompts, options)).rejects.toThrow(message);
  });

  it("refuses token ids outside the vocabulary", async () => {
    await expect(generate(model, [[1, 96]], { maxNewTokens: 1 })).rejects.toThrow(
      /sequence 0, token 1: id 96 is not in the vocabulary \[0, 96\)/,
    );
  });
});
