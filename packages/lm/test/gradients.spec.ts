// Every gradient the learner registers (src/backend/register-gradients.ts) against central
// finite differences of the same function: an independent check of each formula, its
// broadcasting reduction and its attributes (axes, transposes, permutations).
import { beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import "../src/backend/register-gradients.js";
import { useBackend } from "../src/backend/tensor-backend.js";
import { SeededRandom } from "@lean-grpo/random";

const random = new SeededRandom(17);
const values = (shape: number[], low = -1, high = 1) =>
  tf.tensor(
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => low + (high - low) * random.next()),
    shape,
  );

/** Compares tf.grads of sum(f(inputs)·w) with central differences, input by input. */
function checkGradients(f: (...xs: tf.Tensor[]) => tf.Tensor, inputs: tf.Tensor[]) {
  const output = f(...inputs);
  const weights = values(output.shape);
  output.dispose();
  const loss = (...xs: tf.Tensor[]) => tf.sum(tf.mul(f(...xs), weights));
  const analytic = tf.grads(loss)(inputs);
  const h = 1e-2;
  inputs.forEach((input, k) => {
    const base = input.dataSync();
    const expected = analytic[k]!.dataSync();
    base.forEach((_, i) => {
      const shifted = (delta: number) => {
        const data = Float32Array.from(base);
        data[i]! += delta;
        const moved = inputs.map((x, j) => (j === k ? tf.tensor(data, x.shape) : x));
        const value = tf.tidy(() => loss(...moved).dataSync()[0]!);
        moved[k]!.dispose();
        return value;
      };
      const numeric = (shifted(h) - shifted(-h)) / (2 * h);
      expect(Math.abs(expected[i]! - numeric), `input ${k}, element ${i}: ${expected[i]} vs ${numeric}`).toBeLessThan(
        2e-3 * Math.max(1, Math.abs(numeric)),
      );
    });
  });
  tf.dispose([weights, ...analytic]);
}

describe("registered gradients match finite differences", () => {
  beforeAll(async () => {
    await useBackend("cpu");
  });

  const cases: Array<[string, (...xs: tf.Tensor[]) => tf.Tensor, () => tf.Tensor[]]> = [
    ["Add with broadcasting", (a, b) => tf.add(a!, b!), () => [values([2, 3]), values([3])]],
    ["Sub with broadcasting", (a, b) => tf.sub(a!, b!), () => [values([2, 1]), values([2, 3])]],
    ["Multiply with broadcasting", (a, b) => tf.mul(a!, b!), () => [values([2, 3]), values([2, 1])]],
    ["RealDiv with broadcasting", (a, b) => tf.div(a!, b!), () => [values([2, 3]), values([3], 0.5, 2)]],
    ["Minimum", (a, b) => tf.minimum(a!, b!), () => [tf.tensor([0.1, 0.9, -0.5]), tf.tensor([0.5, 0.2, 0.3])]],
    ["Maximum", (a, b) => tf.maximum(a!, b!), () => [tf.tensor([0.1, 0.9, -0.5]), tf.tensor([0.5, 0.2, 0.3])]],
    ["BatchMatMul", (a, b) => tf.matMul(a!, b!), () => [values([3, 4]), values([4, 2])]],
    ["BatchMatMul with transposeA", (a, b) => tf.matMul(a!, b!, true, false), () => [values([4, 3]), values([4, 2])]],
    ["BatchMatMul with transposeB", (a, b) => tf.matMul(a!, b!, false, true), () => [values([3, 4]), values([2, 4])]],
    ["BatchMatMul with both transposed", (a, b) => tf.matMul(a!, b!, true, true), () => [values([4, 3]), values([2, 4])]],
    ["batched BatchMatMul", (a, b) => tf.matMul(a!, b!, false, true), () => [values([2, 3, 4]), values([2, 5, 4])]],
    ["Neg", (x) => tf.neg(x!), () => [values([4])]],
    ["Square", (x) => tf.square(x!), () => [values([4])]],
    ["Exp", (x) => tf.exp(x!), () => [values([4])]],
    ["Log", (x) => tf.log(x!), () => [values([4], 0.5, 2)]],
    ["Sqrt", (x) => tf.sqrt(x!), () => [values([4], 0.5, 2)]],
    ["Rsqrt", (x) => tf.rsqrt(x!), () => [values([4], 0.5, 2)]],
    ["Sigmoid", (x) => tf.sigmoid(x!), () => [values([4], -3, 3)]],
    ["Tanh", (x) => tf.tanh(x!), () => [values([4], -2, 2)]],
    ["Abs", (x) => tf.abs(x!), () => [tf.tensor([-0.7, 0.4, -0.2, 0.9])]],
    ["ClipByValue", (x) => tf.clipByValue(x!, -0.5, 0.5), () => [tf.tensor([-0.9, -0.3, 0.2, 0.8])]],
    ["Select", (t, e) => tf.where(tf.tensor([true, false, true], undefined, "bool"), t!, e!), () => [values([3]), values([3])]],
    ["Softmax", (x) => tf.softmax(x!), () => [values([2, 5], -2, 2)]],
    ["Sum over an axis", (x) => tf.sum(x!, 1), () => [values([2, 3, 2])]],
    ["Mean over axes, kept", (x) => tf.mean(x!, [0, 2], true), () => [values([2, 3, 2])]],
    [
      "Max over an axis",
      (x) => tf.max(x!, -1),
      () => [
        tf.tensor([
          [0.1, 0.7, -0.3],
          [0.9, 0.2, 0.4],
        ]),
      ],
    ],
    ["Reshape", (x) => tf.mul(tf.reshape(x!, [3, 2]), tf.tensor([[1], [2], [3]])), () => [values([2, 3])]],
    ["ExpandDims", (x) => tf.expandDims(x!, 1), () => [values([3])]],
    ["Transpose", (x) => tf.transpose(x!, [2, 0, 1]), () => [values([2, 3, 4])]],
    ["Slice", (x) => tf.slice(x!, [0, 1, 1], [2, 2, 2]), () => [values([2, 3, 4])]],
    [
      "PadV2",
      (x) =>
        tf.pad(x!, [
          [1, 0],
          [0, 2],
        ]),
      () => [values([2, 3])],
    ],
    [
      "SplitV",
      (x) => {
        const [a, b] = tf.split(x!, [1, 2], 1);
        return tf.concat([tf.mul(a!, 3), b!], 1);
      },
      () => [values([2, 3])],
    ],
    ["Concat", (a, b) => tf.concat([a!, b!], 0), () => [values([1, 3]), values([2, 3])]],
    ["Pack", (a, b) => tf.stack([a!, b!], 1), () => [values([3]), values([3])]],
    [
      "Unpack",
      (x) => {
        const [a, b] = tf.unstack(x!, 1);
        return tf.add(tf.mul(a!, 2), b!);
      },
      () => [values([3, 2])],
    ],
  ];

  it.each(cases)("%s", (_name, f, make) => {
    const inputs = make();
    checkGradients(f, inputs);
    tf.dispose(inputs);
  });
});
