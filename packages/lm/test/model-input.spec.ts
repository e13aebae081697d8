// Bad inputs to the model get a ModelInputError that says what was wrong and what is accepted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { ModelInputError } from "../src/errors.js";
import { scoreCompletions } from "../src/logprobs/completion-logprobs.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { fixturePath } from "./support/fixtures.js";

describe("model inputs", () => {
  let model: CausalLM;
  beforeAll(async () => {
    await useBackend("cpu");
    model = await CausalLM.load(fixturePath("qwen2-tiny"));
  });
  afterAll(() => model.dispose());

  const scoring: Array<[string, Array<{ promptIds: number[]; completionIds: number[] }>, object, RegExp]> = [
    ["no sequences", [], {}, /no sequences given; at least one is needed/],
    [
      "an empty prompt",
      [{ promptIds: [], completionIds: [1] }],
      {},
      /sequence 0: the prompt is empty; at least one prompt token is needed/,
    ],
    ["an empty completion", [{ promptIds: [1], completionIds: [] }], {}, /sequence 0: the completion is empty/],
    [
      "a token outside the vocabulary",
      [{ promptIds: [1], completionIds: [2, -1] }],
      {},
      /sequence 0, token 2: id -1 is not in the vocabulary \[0, 96\)/,
    ],
    ["a fractional token id", [{ promptIds: [1.5], completionIds: [2] }], {}, /sequence 0, token 0: id 1.5 is not in the vocabulary/],
    [
      "a sequence longer than the context",
      [{ promptIds: Array(100).fill(1), completionIds: Array(29).fill(2) }],
      {},
      /sequence 0 has 129 tokens; the model's context \(max_position_embeddings\) is 128/,
    ],
    ["temperature 0", [{ promptIds: [1], completionIds: [2] }], { temperature: 0 }, /temperature 0 must be a positive number/],
    ["zero rows per chunk", [{ promptIds: [1], completionIds: [2] }], { chunkRows: 0 }, /chunk rows 0 must be a positive integer/],
  ];
  it.each(scoring)("scoring refuses %s", async (_name, sequences, options, message) => {
    const before = tf.memory().numTensors;
    const error = await scoreCompletions(model, sequences, options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelInputError);
    expect((error as Error).message).toMatch(message);
    expect(tf.memory().numTensors).toBe(before);
  });

  it("a forward pass refuses inconsistent shapes and unknown ids", () => {
    const input = {
      batch: 2,
      queryLength: 2,
      ids: Int32Array.of(1, 2, 3, 4),
      positions: Int32Array.of(0, 1, 0, 1),
      keyMask: new Uint8Array(4).fill(1),
    };
    expect(() => model.forward({ ...input, keyMask: new Uint8Array(6) })).toThrow(
      /forward input shapes disagree: 4 ids and 4 positions for batch 2 × 2, key mask 6 for 0 cached \+ 2 new keys per row/,
    );
    expect(() => model.forward({ ...input, ids: Int32Array.of(1, 2, 3, 96) })).toThrow(/token id 96 is not in the vocabulary \[0, 96\)/);
    const { hidden, present } = model.forward(input);
    expect(hidden.shape).toEqual([2, 2, 32]);
    tf.dispose([hidden, ...present.flatMap((kv) => [kv.keys, kv.values])]);
  });
});
