// Continuous batching: requests decoded beside others (joining mid-flight, under different
// adapters, finishing at different times) give exactly the tokens and logprobs they give
// alone, which are generate()'s for the same request; and they share passes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { ContinuousDecoder, type DecodeRequest } from "../src/decode/continuous-decoder.js";
import { generate } from "../src/decode/generate.js";
import { ModelInputError } from "../src/errors.js";
import type { LoraAdapter } from "../src/lora/lora-adapter.js";
import { loadPeftAdapter } from "../src/lora/peft-adapter.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { fixturePath } from "./support/fixtures.js";

describe.each(["cpu", "wasm"] as const)("continuous batching on %s", (backend) => {
  let model: CausalLM;
  let adapter: LoraAdapter;
  let requests: DecodeRequest[];
  beforeAll(async () => {
    await useBackend(backend);
    model = await CausalLM.load(fixturePath("qwen2-tiny"));
    adapter = await loadPeftAdapter(fixturePath("qwen2-tiny-lora"), model.config);
    const base = { stopTokenIds: [2], adapter: null, seed: 11 };
    requests = [
      { ...base, prompt: [5, 17, 33], n: 4, maxNewTokens: 12, sampling: { temperature: 1, topK: 0, topP: 1 } },
      { ...base, prompt: [70, 2, 9, 41, 88, 13], n: 1, maxNewTokens: 9, sampling: { temperature: 0, topK: 0, topP: 1 } },
      { ...base, prompt: [3], n: 3, maxNewTokens: 15, sampling: { temperature: 0.8, topK: 20, topP: 0.9 }, adapter, seed: 4 },
      { ...base, prompt: [9, 9, 1], n: 2, maxNewTokens: 6, sampling: { temperature: 1.2, topK: 0, topP: 1 }, seed: 99 },
      { ...base, prompt: [40, 41], n: 2, maxNewTokens: 1, sampling: { temperature: 1, topK: 0, topP: 1 }, adapter },
      { ...base, prompt: [12, 60, 7], n: 1, maxNewTokens: 20, sampling: { temperature: 0, topK: 0, topP: 1 }, adapter },
      // Past cpu's 48-key matmul blocks, beside a longer prompt.
      { ...base, prompt: [8, 30], n: 2, maxNewTokens: 70, stopTokenIds: [], sampling: { temperature: 1, topK: 0, topP: 1 } },
      { ...base, prompt: [8, 30, 1, 2, 3, 4, 5], n: 1, maxNewTokens: 60, stopTokenIds: [], sampling: { temperature: 1, topK: 0, topP: 1 } },
    ];
  });
  afterAll(() => {
    adapter.dispose();
    model.dispose();
  });

  const alone = (r: DecodeRequest) =>
    generate(
      model,
      Array.from({ length: r.n }, () => r.prompt),
      { maxNewTokens: r.maxNewTokens, ...r.sampling, seed: r.seed, stopTokenIds: r.stopTokenIds, adapter: r.adapter },
    );

  it("gives each request generate()'s tokens and logprobs for it alone, however it shares the passes", async () => {
    const expected = await Promise.all(requests.map(alone));
    // Each alone through the decoder.
    const single = new ContinuousDecoder(model, { maxRows: 64 });
    for (const [i, r] of requests.entries()) expect(await single.decode(r)).toEqual(expected[i]);
    const passesAlone = single.passes;

    // All at once, two joining after a few passes, under two adapters.
    const shared = new ContinuousDecoder(model, { maxRows: 64 });
    const first = requests.slice(0, 4).map((r) => shared.decode(r));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const later = requests.slice(4).map((r) => shared.decode(r));
    expect(await Promise.all([...first, ...later])).toEqual(expected);
    expect(shared.passes).toBeLessThan(passesAlone);

    // With too few rows for all: requests wait their turn, same results.
    const narrow = new ContinuousDecoder(model, { maxRows: 3 });
    expect(await Promise.all(requests.map((r) => narrow.decode(r)))).toEqual(expected);
  });

  it("drops an aborted request's rows, finishes the others, and leaves no tensors behind", async () => {
    const decoder = new ContinuousDecoder(model, { maxRows: 64 });
    const expected = await alone(requests[0]!);
    const before = tf.memory().numTensors;
    const controller = new AbortController();
    const long = { ...requests[5]!, maxNewTokens: 60, stopTokenIds: [], signal: controller.signal };
    const cancelled = decoder.decode(long);
    const kept = decoder.decode(requests[0]!);
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error("client cancelled"));
    await expect(cancelled).rejects.toThrow("client cancelled");
    expect(await kept).toEqual(expected);
    expect(tf.memory().numTensors).toBe(before);
  });

  it("refuses bad requests naming what is accepted", async () => {
    const decoder = new ContinuousDecoder(model, { maxRows: 4 });
    const ok = requests[0]!;
    const cases: Array<[Partial<DecodeRequest>, RegExp]> = [
      [{ maxNewTokens: 0 }, /max_tokens 0 must be an integer >= 1/],
      [{ n: 0 }, /n 0 must be an integer >= 1/],
      [{ prompt: [] }, /the prompt is empty/],
      [{ prompt: [1, 96] }, /prompt 0, token 1: id 96 is not in the vocabulary \[0, 96\)/],
      [{ maxNewTokens: 200 }, /prompt plus max_tokens is 203 tokens; the model's context \(max_position_embeddings\) is 128/],
      [{ sampling: { temperature: 1, topK: 0, topP: 0 } }, /top_p 0 must be in \(0, 1\]/],
    ];
    for (const [change, message] of cases) {
      const refused = decoder.decode({ ...ok, ...change });
      await expect(refused).rejects.toThrow(ModelInputError);
      await expect(refused).rejects.toThrow(message);
    }
    expect(() => new ContinuousDecoder(model, { maxRows: 0 })).toThrow(/max rows 0 must be an integer >= 1/);
  });
});
