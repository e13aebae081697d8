// Gradients of the tfjs kernels the learner differentiates through: the model's forward
// pass, LoRA, and the elementwise ops and reductions that policy-gradient losses use.
//
// Why this file exists: @tensorflow/tfjs-core's Node build (dist/tf-core.node.js) registers
// no gradients at all; tfjs ships them as ESM modules (dist/register_all_gradients.js)
// that the full @tensorflow/tfjs bundle inlines and plain Node cannot import (they use
// extensionless and directory imports). Without them tf.variableGrads fails with
// "gradient function not found for Add". The formulas follow tfjs-core's own
// gradients/*_grad.ts, written with public ops; a kernel that already has a gradient
// (e.g. when @tensorflow/tfjs is also loaded) keeps it. A kernel not listed here fails
// with tfjs's "gradient function not found for <Kernel>".
//
// The learner's gradients are checked against PyTorch (test/gradient-parity.spec.ts).
import * as tf from "@tensorflow/tfjs-core";

type Saved = tf.Tensor[];
type Attrs = Record<string, unknown>;

/** Sums a broadcast gradient back down to the shape of the input it came from. */
function reduceTo(grad: tf.Tensor, shape: number[]): tf.Tensor {
  const axes = tf.broadcast_util.getReductionAxes(shape, grad.shape);
  const reduced = axes.length > 0 ? tf.sum(grad, axes) : grad;
  return tf.reshape(reduced, shape);
}

/** dy of a reduction, broadcast back over the reduced axes of x. */
function expandReduced(dy: tf.Tensor, x: tf.Tensor, axis: number | number[]): tf.Tensor {
  const expanded = x.shape.slice();
  for (const a of tf.util.parseAxisParam(axis, x.shape)) expanded[a] = 1;
  return tf.mul(tf.reshape(dy, expanded), tf.onesLike(x));
}

const single = (dy: tf.Tensor | tf.Tensor[]) => dy as tf.Tensor;
const many = (dy: tf.Tensor | tf.Tensor[]) => dy as tf.Tensor[];

const GRADIENTS: tf.GradConfig[] = [
  // Elementwise binary ops (with broadcasting).
  {
    kernelName: tf.Add,
    inputsToSave: ["a", "b"],
    gradFunc: (dy, [a, b]: Saved) => ({ a: () => reduceTo(single(dy), a!.shape), b: () => reduceTo(single(dy), b!.shape) }),
  },
  {
    kernelName: tf.Sub,
    inputsToSave: ["a", "b"],
    gradFunc: (dy, [a, b]: Saved) => ({ a: () => reduceTo(single(dy), a!.shape), b: () => reduceTo(tf.neg(single(dy)), b!.shape) }),
  },
  {
    kernelName: tf.Multiply,
    inputsToSave: ["a", "b"],
    gradFunc: (dy, [a, b]: Saved) => ({
      a: () => reduceTo(tf.mul(single(dy), tf.cast(b!, "float32")), a!.shape),
      b: () => reduceTo(tf.mul(single(dy), tf.cast(a!, "float32")), b!.shape),
    }),
  },
  {
    kernelName: tf.RealDiv,
    inputsToSave: ["a", "b"],
    gradFunc: (dy, [a, b]: Saved) => ({
      a: () => reduceTo(tf.div(single(dy), b!), a!.shape),
      b: () => reduceTo(tf.neg(tf.div(tf.mul(single(dy), a!), tf.square(b!))), b!.shape),
    }),
  },
  {
    kernelName: tf.Minimum,
    inputsToSave: ["a", "b"],
    gradFunc: (dy, [a, b]: Saved) => ({
      a: () => reduceTo(tf.mul(single(dy), tf.cast(tf.lessEqual(a!, b!), "float32")), a!.shape),
      b: () => reduceTo(tf.mul(single(dy), tf.cast(tf.greater(a!, b!), "float32")), b!.shape),
    }),
  },
  {
    kernelName: tf.Maximum,
    inputsToSave: ["a", "b"],
    gradFunc: (dy, [a, b]: Saved) => ({
      a: () => reduceTo(tf.mul(single(dy), tf.cast(tf.greaterEqual(a!, b!), "float32")), a!.shape),
      b: () => reduceTo(tf.mul(single(dy), tf.cast(tf.less(a!, b!), "float32")), b!.shape),
    }),
  },
  {
    kernelName: tf.BatchMatMul,
    inputsToSave: ["a", "b"],
    gradFunc: (dy, [a, b]: Saved, attrs: Attrs) => {
      const d = single(dy);
      const ta = attrs.transposeA === true;
      const tb = attrs.transposeB === true;
      const mm = (x: tf.Tensor, y: tf.Tensor, tx: boolean, ty: boolean) => tf.matMul(x, y, tx, ty);
      const [da, db] =
        !ta && !tb
          ? [() => mm(d, b!, false, true), () => mm(a!, d, true, false)]
          : !ta && tb
            ? [() => mm(d, b!, false, false), () => mm(d, a!, true, false)]
            : ta && !tb
              ? [() => mm(b!, d, false, true), () => mm(a!, d, false, false)]
              : [() => mm(b!, d, true, true), () => mm(d, a!, true, true)];
      // A rank-2 operand broadcast over a batch gets its gradient summed over that batch.
      return { a: () => reduceTo(da(), a!.shape), b: () => reduceTo(db(), b!.shape) };
    },
  },
  // Elementwise unary ops.
  { kernelName: tf.Neg, gradFunc: (dy) => ({ x: () => tf.neg(single(dy)) }) },
  { kernelName: tf.Identity, gradFunc: (dy) => ({ x: () => tf.clone(single(dy)) }) },
  { kernelName: tf.Cast, gradFunc: (dy) => ({ x: () => tf.clone(single(dy)) }) },
  { kernelName: tf.Floor, gradFunc: (dy) => ({ x: () => tf.zerosLike(single(dy)) }) },
  { kernelName: tf.Square, inputsToSave: ["x"], gradFunc: (dy, [x]: Saved) => ({ x: () => tf.mul(single(dy), tf.mul(x!, 2)) }) },
  { kernelName: tf.Exp, outputsToSave: [true], gradFunc: (dy, [y]: Saved) => ({ x: () => tf.mul(single(dy), y!) }) },
  { kernelName: tf.Log, inputsToSave: ["x"], gradFunc: (dy, [x]: Saved) => ({ x: () => tf.div(single(dy), x!) }) },
  { kernelName: tf.Sqrt, outputsToSave: [true], gradFunc: (dy, [y]: Saved) => ({ x: () => tf.div(single(dy), tf.mul(y!, 2)) }) },
  {
    // d rsqrt(x) = −½ x^(−3/2) = −½ y³
    kernelName: tf.Rsqrt,
    outputsToSave: [true],
    gradFunc: (dy, [y]: Saved) => ({ x: () => tf.mul(single(dy), tf.mul(tf.pow(y!, 3), -0.5)) }),
  },
  {
    kernelName: tf.Sigmoid,
    outputsToSave: [true],
    gradFunc: (dy, [y]: Saved) => ({ x: () => tf.mul(single(dy), tf.mul(y!, tf.sub(1, y!))) }),
  },
  {
    kernelName: tf.Tanh,
    outputsToSave: [true],
    gradFunc: (dy, [y]: Saved) => ({ x: () => tf.mul(single(dy), tf.sub(1, tf.square(y!))) }),
  },
  { kernelName: tf.Abs, inputsToSave: ["x"], gradFunc: (dy, [x]: Saved) => ({ x: () => tf.mul(single(dy), tf.sign(x!)) }) },
  {
    kernelName: tf.ClipByValue,
    inputsToSave: ["x"],
    gradFunc: (dy, [x]: Saved, attrs: Attrs) => ({
      x: () => {
        const inside = tf.logicalAnd(tf.greaterEqual(x!, attrs.clipValueMin as number), tf.lessEqual(x!, attrs.clipValueMax as number));
        return tf.mul(single(dy), tf.cast(inside, "float32"));
      },
    }),
  },
  {
    kernelName: tf.Select,
    inputsToSave: ["condition"],
    gradFunc: (dy, [condition]: Saved) => ({
      condition: () => tf.zerosLike(tf.cast(condition!, "float32")),
      t: () => tf.mul(single(dy), tf.cast(condition!, "float32")),
      e: () => tf.mul(single(dy), tf.cast(tf.logicalNot(condition!), "float32")),
    }),
  },
  {
    kernelName: tf.Softmax,
    outputsToSave: [true],
    gradFunc: (dy, [y]: Saved, attrs: Attrs) => ({
      logits: () => {
        const dyTimesY = tf.mul(single(dy), y!);
        return tf.sub(dyTimesY, tf.mul(tf.sum(dyTimesY, attrs.dim as number, true), y!));
      },
    }),
  },
  // Reductions.
  {
    kernelName: tf.Sum,
    inputsToSave: ["x"],
    gradFunc: (dy, [x]: Saved, attrs: Attrs) => ({ x: () => expandReduced(single(dy), x!, attrs.axis as number[]) }),
  },
  {
    kernelName: tf.Mean,
    inputsToSave: ["x"],
    gradFunc: (dy, [x]: Saved, attrs: Attrs) => ({
      x: () => {
        const axes = tf.util.parseAxisParam(attrs.axis as number[], x!.shape);
        const count = axes.reduce((n, a) => n * x!.shape[a]!, 1);
        return tf.div(expandReduced(single(dy), x!, axes), count);
      },
    }),
  },
  {
    // The gradient goes to every position that holds the maximum, as in tfjs.
    kernelName: tf.Max,
    inputsToSave: ["x"],
    outputsToSave: [true],
    gradFunc: (dy, [x, y]: Saved, attrs: Attrs) => ({
      x: () => {
        const axes = tf.util.parseAxisParam(attrs.reductionIndices as number[], x!.shape);
        const isMax = tf.cast(tf.equal(x!, expandReduced(y!, x!, axes)), "float32");
        return tf.mul(expandReduced(single(dy), x!, axes), isMax);
      },
    }),
  },
  // Shape ops.
  { kernelName: tf.Reshape, inputsToSave: ["x"], gradFunc: (dy, [x]: Saved) => ({ x: () => tf.reshape(single(dy), x!.shape) }) },
  { kernelName: tf.ExpandDims, inputsToSave: ["input"], gradFunc: (dy, [x]: Saved) => ({ input: () => tf.reshape(single(dy), x!.shape) }) },
  {
    kernelName: tf.Transpose,
    gradFunc: (dy, _saved, attrs: Attrs) => {
      const perm = attrs.perm as number[];
      const undo = perm.map((_, i) => perm.indexOf(i));
      return { x: () => tf.transpose(single(dy), undo) };
    },
  },
  {
    kernelName: tf.Slice,
    inputsToSave: ["x"],
    gradFunc: (dy, [x]: Saved, attrs: Attrs) => ({
      x: () => {
        const [begin, size] = tf.slice_util.parseSliceParams(x!, attrs.begin as number[], attrs.size as number[]) as [number[], number[]];
        const paddings = x!.shape.map((dim, i) => [begin[i]!, dim - begin[i]! - size[i]!] as [number, number]);
        return tf.pad(single(dy), paddings);
      },
    }),
  },
  {
    kernelName: tf.PadV2,
    inputsToSave: ["x"],
    gradFunc: (dy, [x]: Saved, attrs: Attrs) => ({
      x: () =>
        tf.slice(
          single(dy),
          (attrs.paddings as Array<[number, number]>).map((p) => p[0]),
          x!.shape,
        ),
    }),
  },
  { kernelName: tf.SplitV, gradFunc: (dy, _saved, attrs: Attrs) => ({ x: () => tf.concat(many(dy), attrs.axis as number) }) },
  {
    kernelName: tf.Concat,
    saveAllInputs: true,
    gradFunc: (dy, saved: Saved, attrs: Attrs) => {
      const axis = tf.util.parseAxisParam(attrs.axis as number, saved[0]!.shape)[0]!;
      const parts = tf.split(
        single(dy),
        saved.map((t) => t.shape[axis]!),
        axis,
      );
      return Object.fromEntries(parts.map((part, i) => [String(i), () => part]));
    },
  },
  {
    kernelName: tf.Pack,
    saveAllInputs: true,
    gradFunc: (dy, _saved, attrs: Attrs) => {
      const parts = tf.unstack(single(dy), attrs.axis as number);
      return Object.fromEntries(parts.map((part, i) => [String(i), () => part]));
    },
  },
  { kernelName: tf.Unpack, gradFunc: (dy, _saved, attrs: Attrs) => ({ value: () => tf.stack(many(dy), attrs.axis as number) }) },
];

for (const config of GRADIENTS) {
  if (!tf.getGradient(config.kernelName)) tf.registerGradient(config);
}
