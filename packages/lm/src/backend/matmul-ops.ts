// The matrix products of the model, forward and backward, behind one interface so that
// each backend gets the form it runs fastest.
//
// Why: the wasm backend's BatchMatMul uses XNNPACK (~15 GFLOP/s) only for a rank-2 product
// with neither operand transposed; every other case (a transposed operand, a batch of
// products, and so every gradient tfjs derives, e.g. dx = dy·Wᵀ) falls to a naive loop at
// ~1 GFLOP/s (learner-facts §2). The "xnnpack" ops materialise transposes, split batches
// into rank-2 products, and give every differentiable product a gradient built the same
// way. The "native" ops are plain tf.matMul, for backends without that trap.
//
// Batched products (attention) are one op: the batch is walked inside the op rather than
// unstacked into the graph, see batchItems().
import * as tf from "@tensorflow/tfjs-core";
import { customGradient } from "./custom-gradient.js";

export interface MatMulOps {
  readonly kind: "native" | "xnnpack";
  /** x·W for a weight W stored [in, out]: differentiable in x, and in W when W is a trainable variable. */
  linear(x: tf.Tensor2D, weight: tf.Tensor2D): tf.Tensor2D;
  /** op(a)·op(b), differentiable in both. */
  matMul(a: tf.Tensor2D, b: tf.Tensor2D, transposeA?: boolean, transposeB?: boolean): tf.Tensor2D;
  /** Batched op(a)·op(b) over the first axis, differentiable in both. */
  batchMatMul(a: tf.Tensor3D, b: tf.Tensor3D, transposeA?: boolean, transposeB?: boolean): tf.Tensor3D;
  /** op(a)·op(b) for use inside gradient functions and inference, where no gradient is taken. */
  product(a: tf.Tensor2D, b: tf.Tensor2D, transposeA?: boolean, transposeB?: boolean): tf.Tensor2D;
}

export const nativeMatMulOps: MatMulOps = {
  kind: "native",
  linear: (x, weight) => tf.matMul(x, weight),
  matMul: (a, b, transposeA = false, transposeB = false) => tf.matMul(a, b, transposeA, transposeB),
  batchMatMul: (a, b, transposeA = false, transposeB = false) => tf.matMul(a, b, transposeA, transposeB),
  product: (a, b, transposeA = false, transposeB = false) => tf.matMul(a, b, transposeA, transposeB),
};

/** op(a)·op(b) as one untransposed rank-2 product: the only form XNNPACK runs. */
function xnnpackProduct(a: tf.Tensor2D, b: tf.Tensor2D, transposeA = false, transposeB = false): tf.Tensor2D {
  return tf.tidy(() => tf.matMul(transposeA ? tf.transpose(a) : a, transposeB ? tf.transpose(b) : b));
}

/**
 * Gradients of C = op(A)·op(B), each itself one untransposed product:
 *   C = A·B:   dA = dC·Bᵀ,   dB = Aᵀ·dC
 *   C = A·Bᵀ:  dA = dC·B,    dB = dCᵀ·A
 *   C = Aᵀ·B:  dA = B·dCᵀ,   dB = A·dC
 *   C = Aᵀ·Bᵀ: dA = Bᵀ·dCᵀ,  dB = dCᵀ·Aᵀ
 */
function productGradients(dC: tf.Tensor2D, a: tf.Tensor2D, b: tf.Tensor2D, transposeA: boolean, transposeB: boolean) {
  if (!transposeA && !transposeB) return [xnnpackProduct(dC, b, false, true), xnnpackProduct(a, dC, true, false)];
  if (!transposeA && transposeB) return [xnnpackProduct(dC, b), xnnpackProduct(dC, a, true, false)];
  if (transposeA && !transposeB) return [xnnpackProduct(b, dC, false, true), xnnpackProduct(a, dC)];
  return [xnnpackProduct(b, dC, true, true), xnnpackProduct(dC, a, true, true)];
}

const differentiableProducts = new Map<string, (a: tf.Tensor2D, b: tf.Tensor2D) => tf.Tensor2D>();

function differentiableProduct(transposeA: boolean, transposeB: boolean) {
  const key = `${transposeA}${transposeB}`;
  let op = differentiableProducts.get(key);
  if (!op) {
    op = customGradient((a: tf.Tensor2D, b: tf.Tensor2D, save: tf.GradSaveFunc) => {
      save([a, b]);
      return {
        value: xnnpackProduct(a, b, transposeA, transposeB),
        gradFunc: (dC: tf.Tensor2D, saved: tf.Tensor[]) =>
          productGradients(dC, saved[0] as tf.Tensor2D, saved[1] as tf.Tensor2D, transposeA, transposeB),
      };
    });
    differentiableProducts.set(key, op);
  }
  return op;
}

/**
 * The matrices of a batch [n, rows, cols] as n tensors, through one read of the whole
 * batch. Not tf.unstack/slice/gather: the wasm Slice kernel (behind unstack and split)
 * copies the whole source out of the heap for every output, and wasm gather walks
 * element by element; either made batched attention products ~10× slower than their
 * arithmetic.
 */
function batchItems(x: tf.Tensor3D): tf.Tensor2D[] {
  const [n, rows, cols] = x.shape;
  const data = x.dataSync() as Float32Array;
  return Array.from({ length: n }, (_, i) => tf.tensor2d(data.subarray(i * rows * cols, (i + 1) * rows * cols), [rows, cols]));
}

/** [n, rows, cols] → [n, cols, rows]: one Transpose of the whole batch, exact. */
const batchTranspose = (x: tf.Tensor3D) => tf.transpose(x, [0, 2, 1]) as tf.Tensor3D;

/**
 * a[i]·b[i] for every i, each an untransposed rank-2 product (the form XNNPACK runs),
 * stacked. Operands that a product needs transposed are transposed as whole batches
 * first: one op, where a transpose per item cost about a third of the products' time.
 */
function untransposedBatchProduct(a: tf.Tensor3D, b: tf.Tensor3D): tf.Tensor3D {
  return tf.tidy(() => {
    const left = batchItems(a);
    const right = batchItems(b);
    return tf.stack(left.map((ai, i) => tf.matMul(ai, right[i]!))) as tf.Tensor3D;
  });
}

/**
 * Batched op(a)·op(b) and its gradients, the rank-2 identities of productGradients with
 * each transpose taken over the whole batch (T below):
 *   C = A·B:   dA = dC·Bᵀ,   dB = Aᵀ·dC
 *   C = A·Bᵀ:  dA = dC·B,    dB = dCᵀ·A
 *   C = Aᵀ·B:  dA = B·dCᵀ,   dB = A·dC
 *   C = Aᵀ·Bᵀ: dA = Bᵀ·dCᵀ,  dB = dCᵀ·Aᵀ
 */
function batchedValue(a: tf.Tensor3D, b: tf.Tensor3D, transposeA: boolean, transposeB: boolean): tf.Tensor3D {
  return tf.tidy(() => untransposedBatchProduct(transposeA ? batchTranspose(a) : a, transposeB ? batchTranspose(b) : b));
}

function batchedGradients(dC: tf.Tensor3D, a: tf.Tensor3D, b: tf.Tensor3D, transposeA: boolean, transposeB: boolean): tf.Tensor3D[] {
  const T = batchTranspose;
  const P = untransposedBatchProduct;
  return tf.tidy(() => {
    if (!transposeA && !transposeB) return [P(dC, T(b)), P(T(a), dC)];
    if (!transposeA && transposeB) return [P(dC, b), P(T(dC), a)];
    if (transposeA && !transposeB) return [P(b, T(dC)), P(a, dC)];
    return [P(T(b), T(dC)), P(T(dC), T(a))];
  });
}

/** Batched products as one op: per-item untransposed products, and their gradients likewise. */
const batchedProducts = new Map<string, (a: tf.Tensor3D, b: tf.Tensor3D) => tf.Tensor3D>();

function batchedProduct(transposeA: boolean, transposeB: boolean) {
  const key = `${transposeA}${transposeB}`;
  let op = batchedProducts.get(key);
  if (!op) {
    op = customGradient((a: tf.Tensor3D, b: tf.Tensor3D, save: tf.GradSaveFunc) => {
      save([a, b]);
      return {
        value: batchedValue(a, b, transposeA, transposeB),
        gradFunc: (dC: tf.Tensor3D, saved: tf.Tensor[]) =>
          batchedGradients(dC, saved[0] as tf.Tensor3D, saved[1] as tf.Tensor3D, transposeA, transposeB),
      };
    });
    batchedProducts.set(key, op);
  }
  return op;
}

export const xnnpackMatMulOps: MatMulOps = {
  kind: "xnnpack",
  linear(x, weight) {
    // Full fine-tuning: the weight is a variable and needs its own gradient.
    if (weight instanceof tf.Variable && weight.trainable) return differentiableProduct(false, false)(x, weight);
    // The weight is frozen and lives as long as the model, so the gradient may close over
    // it; only dx = dy·Wᵀ is computed (a customGrad input would also get a dW).
    const op = customGradient((input: tf.Tensor2D, _save: tf.GradSaveFunc) => ({
      value: tf.matMul(input, weight) as tf.Tensor2D,
      gradFunc: (dy: tf.Tensor2D) => xnnpackProduct(dy, weight, false, true),
    }));
    return op(x);
  },
  matMul: (a, b, transposeA = false, transposeB = false) => differentiableProduct(transposeA, transposeB)(a, b),
  batchMatMul(a, b, transposeA = false, transposeB = false) {
    if (a.shape[0] !== b.shape[0]) throw new Error(`batch sizes differ: ${a.shape[0]} and ${b.shape[0]}`);
    return batchedProduct(transposeA, transposeB)(a, b);
  },
  product: xnnpackProduct,
};

/** The products for a tfjs backend: only wasm needs the XNNPACK-shaped ones. */
export function matMulOpsForBackend(backendName: string): MatMulOps {
  return backendName === "wasm" ? xnnpackMatMulOps : nativeMatMulOps;
}
