// No tensor outlives a training step, a scoring call or a decode, also when the call fails
// part-way: an abort between layers (a deadline), inside the gradient tape or not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { ModelInputError } from "../src/errors.js";
import { completionLogprobs, scoreCompletions } from "../src/logprobs/completion-logprobs.js";
import type { LoraAdapter } from "../src/lora/lora-adapter.js";
import { loadPeftAdapter } from "../src/lora/peft-adapter.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { lossGradients } from "../src/gradients/adapter-gradients.js";
import { fixturePath, readParity, sequencesOf, type Parity } from "./support/fixtures.js";

describe.each(["cpu", "wasm"] as const)("tensor memory on %s", (backend) => {
  let model: CausalLM;
  let adapter: LoraAdapter;
  let parity: Parity;

  beforeAll(async () => {
    await useBackend(backend);
    model = await CausalLM.load(fixturePath("qwen3-tiny"));
    adapter = await loadPeftAdapter(fixturePath("qwen3-tiny-lora"), model.config);
    parity = await readParity("qwen3-tiny");
  });
  afterAll(() => {
    adapter.dispose();
    model.dispose();
  });

  const step = (optimizer: tf.Optimizer, signal?: AbortSignal) => {
    const { value, grads } = lossGradients(() => {
      const scores = completionLogprobs(model, sequencesOf(parity), { adapter, signal, dropoutSeed: 1, chunkRows: 5 });
      return tf.neg(tf.sum(scores.logprobs)) as tf.Scalar;
    }, adapter.variables());
    optimizer.applyGradients(Object.entries(grads).map(([name, tensor]) => ({ name, tensor })));
    tf.dispose([value, ...Object.values(grads)]);
  };

  it("stays flat over training steps (Adam's moments appear once, on the first step)", () => {
    const optimizer = tf.train.adam(1e-3);
    step(optimizer);
    const afterFirst = tf.memory().numTensors;
    for (let i = 0; i < 4; i++) step(optimizer);
    expect(tf.memory().numTensors).toBe(afterFirst);
    optimizer.dispose();
  });

  /** A signal that turns aborted after `checks` checks: mid-forward, with a layer on the tape. */
  const abortedAfter = (checks: number) => {
    let seen = 0;
    return {
      throwIfAborted: () => {
        if (++seen > checks) throw new Error("deadline exceeded");
      },
    } as unknown as AbortSignal;
  };

  it("releases the gradient tape when a step is aborted between layers", () => {
    const optimizer = tf.train.adam(1e-3);
    step(optimizer);
    const baseline = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) expect(() => step(optimizer, abortedAfter(1))).toThrow("deadline exceeded");
    expect(tf.memory().numTensors).toBe(baseline);
    step(optimizer); // the engine is still usable
    expect(tf.memory().numTensors).toBe(baseline);
    optimizer.dispose();
  });

  it("releases everything when a gradient function fails in the backward pass", () => {
    const baseline = tf.memory().numTensors;
    const failing = tf.customGrad(((x: tf.Tensor, save: tf.GradSaveFunc) => {
      save([x]);
      return {
        value: tf.mul(x, 2),
        gradFunc: () => {
          throw new Error("backward failed");
        },
      };
    }) as unknown as Parameters<typeof tf.customGrad>[0]);
    expect(() =>
      lossGradients(() => {
        const scores = completionLogprobs(model, sequencesOf(parity), { adapter });
        return tf.sum(failing(scores.logprobs)) as tf.Scalar;
      }, adapter.variables()),
    ).toThrow("backward failed");
    expect(tf.memory().numTensors).toBe(baseline);
  });

  it("leaves nothing behind when scoring is aborted or refused", async () => {
    const baseline = tf.memory().numTensors;
    await expect(scoreCompletions(model, sequencesOf(parity), { signal: AbortSignal.abort(new Error("cancelled")) })).rejects.toThrow(
      "cancelled",
    );
    await expect(scoreCompletions(model, [{ promptIds: [1], completionIds: [96] }])).rejects.toThrow(ModelInputError);
    expect(tf.memory().numTensors).toBe(baseline);
  });
});
