// On wasm every matrix product of a training step, forward and backward, must be a rank-2
// product with no transposed operand: the only case the wasm backend hands to XNNPACK
// (every other one runs a naive loop ~15× slower; learner-facts §2). The test watches the
// BatchMatMul kernel while a full step (logprobs, loss, gradients, Adam) runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { completionLogprobs } from "../src/logprobs/completion-logprobs.js";
import { loadPeftAdapter } from "../src/lora/peft-adapter.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { lossGradients } from "../src/gradients/adapter-gradients.js";
import { fixturePath, readParity, sequencesOf } from "./support/fixtures.js";

interface Call {
  a: number[];
  b: number[];
  transposeA: boolean;
  transposeB: boolean;
}

describe("wasm matrix products", () => {
  const calls: Call[] = [];
  let original: tf.KernelConfig;

  beforeAll(async () => {
    await useBackend("wasm");
    original = tf.getKernel("BatchMatMul", "wasm")!;
    tf.unregisterKernel("BatchMatMul", "wasm");
    tf.registerKernel({
      ...original,
      setupFunc: undefined,
      kernelFunc: (args) => {
        const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
        const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
        calls.push({ a: a.shape, b: b.shape, transposeA, transposeB });
        return original.kernelFunc(args);
      },
    });
  });
  afterAll(() => {
    tf.unregisterKernel("BatchMatMul", "wasm");
    tf.registerKernel(original);
  });

  it.each(["qwen2-tiny", "qwen3-tiny"] as const)("take the XNNPACK form in a whole training step of %s", async (name) => {
    const model = await CausalLM.load(fixturePath(name));
    const adapter = await loadPeftAdapter(fixturePath(`${name}-lora`), model.config);
    const parity = await readParity(name);
    const optimizer = tf.train.adam(1e-3);
    calls.length = 0;
    const { value, grads } = lossGradients(() => {
      const scores = completionLogprobs(model, sequencesOf(parity), { adapter, temperature: 0.9, chunkRows: 4 });
      return tf.neg(tf.add(tf.mean(scores.logprobs), tf.mean(scores.entropies))) as tf.Scalar;
    }, adapter.variables());
    optimizer.applyGradients(Object.entries(grads).map(([name, tensor]) => ({ name, tensor })));
    tf.dispose([value, ...Object.values(grads)]);
    optimizer.dispose();

    expect(calls.length).toBeGreaterThan(50);
    const slow = calls.filter((c) => c.transposeA || c.transposeB || c.a.length !== 2 || c.b.length !== 2);
    expect(slow).toEqual([]);
    adapter.dispose();
    model.dispose();
  });
});
