// Log-probability of given target tokens, and the entropy of each position's distribution,
// at a temperature: logits = h·headᵀ / T. One differentiable op whose forward and backward
// both walk the rows in chunks, so the [rows × vocab] logits never exist at once (the
// backward recomputes each chunk's logits rather than keeping them: the memory of one
// chunk for the cost of one more head product).
//
// The gradient is written out rather than derived by tfjs: a gather's gradient needs
// UnsortedSegmentSum, which the wasm backend lacks. With z = logits/T, p = softmax(z):
//   ∂ log p[t] / ∂z = onehot(t) − p
//   ∂ H / ∂z        = −p · (log p + H)         where H = −Σ p log p
// and ∂/∂h = (∂/∂z)·head / T. A frozen head gets no gradient; a trainable one (full
// fine-tuning) gets ∂/∂head = (∂/∂z)ᵀ·h / T, summed over the chunks.
//
// With top-k/top-p (the sampling distribution, sampling-distribution.ts) the softmax is
// taken over the kept set only: the cut is decided from the chunk's logit values (no
// gradient through the choice), cut tokens get −1e9 added, so their p is exactly 0 and the
// formulas above give them no gradient. The target (sampled) token is always kept.
// A reasoning mask (reasoning-vocab/reasoning-mask.ts) comes first: ids it excludes in a
// row's block state are cut before top-k/top-p look at the row, as the sampler does.
import * as tf from "@tensorflow/tfjs-core";
import { customGradient } from "../backend/custom-gradient.js";
import type { MatMulOps } from "../backend/matmul-ops.js";
import { ModelInputError } from "../errors.js";
import { isTrainable } from "../model/model-weights.js";
import { isAllowed, restricts, type BlockState } from "../reasoning-vocab/reasoning-mask.js";
import type { ReasoningMaskMode } from "../reasoning-vocab/reasoning-settings.js";
import type { ReasoningVocabulary } from "../reasoning-vocab/reasoning-vocabulary.js";
import { supportOfRow, truncates, validateSamplingDistribution, type SamplingDistribution } from "./sampling-distribution.js";

/** The reasoning mask of each scored row: the vocabulary, the mode, and the block state the row's target was sampled in. */
export interface RowReasoningMask {
  vocab: ReasoningVocabulary;
  mode: ReasoningMaskMode;
  /** One per row of `hidden`. */
  states: readonly BlockState[];
}

/** Added to the logits of cut tokens: exp underflows to exactly 0, and 0·(−1e9) stays 0. */
const CUT = -1e9;

export interface TokenLogprobsOptions {
  /** Logits are divided by this (> 0). */
  temperature: number;
  /** Top-k (0: off) of the sampling distribution; applied after the temperature. */
  topK?: number;
  /** Top-p in (0, 1] (1: off) of the sampling distribution; applied after top-k. */
  topP?: number;
  /** Rows per chunk; a chunk's logits take rows × vocab floats. */
  chunkRows: number;
  ops: MatMulOps;
  /** The head is built from trainable rows (an adapter's token rows) though not itself a variable. */
  headTrainable?: boolean;
  /** The reasoning mask, applied before top-k/top-p. */
  reasoning?: RowReasoningMask;
}

/**
 * Rows [start, end) of a matrix. A gather rather than a slice: the wasm slice kernel
 * copies the whole source out of the heap each time, which per chunk adds up to
 * rows²·hidden. (Inside the op no gradient of the gather is needed.)
 */
function rowsOf(x: tf.Tensor2D, start: number, end: number): tf.Tensor2D {
  if (start === 0 && end === x.shape[0]) return x;
  return tf.tidy(() => tf.gather(x, tf.range(start, end, 1, "int32")));
}

/** Rows per chunk so that one chunk's logits stay near 4M floats (16 MiB). */
export function defaultChunkRows(vocabSize: number): number {
  return Math.max(1, Math.floor(4_194_304 / vocabSize));
}

/**
 * For hidden states [rows, hidden] and one target id per row, returns [rows, 2]: column 0
 * the target's log-probability, column 1 the entropy. Differentiable in `hidden`, and in
 * `head` when it is a trainable variable.
 */
export function tokenLogprobsAndEntropy(
  hidden: tf.Tensor2D,
  headInput: tf.Tensor2D,
  targets: Int32Array,
  options: TokenLogprobsOptions,
): tf.Tensor2D {
  const { temperature, chunkRows, ops } = options;
  const distribution: SamplingDistribution = { temperature, topK: options.topK ?? 0, topP: options.topP ?? 1 };
  validateSamplingDistribution(distribution);
  if (targets.length !== hidden.shape[0]) throw new Error(`${targets.length} targets for ${hidden.shape[0]} rows`);
  if (!Number.isSafeInteger(chunkRows) || chunkRows < 1) throw new ModelInputError(`chunk rows ${chunkRows} must be a positive integer`);
  const rows = hidden.shape[0];
  const vocab = headInput.shape[0];
  const chunks: Array<[number, number]> = [];
  for (let start = 0; start < rows; start += chunkRows) chunks.push([start, Math.min(rows, start + chunkRows)]);

  // Scaled logits z, log-softmax and softmax of rows [start, end). `headT` is headᵀ where
  // the backend wants transposes materialised (once per pass, not once per chunk).
  const chunkDistribution = (h: tf.Tensor2D, head: tf.Tensor2D, headT: tf.Tensor2D | null, start: number, end: number) => {
    const rowsOfChunk = rowsOf(h, start, end);
    const logits = headT ? ops.product(rowsOfChunk, headT) : ops.product(rowsOfChunk, head, false, true);
    const scaled = tf.div(logits, temperature) as tf.Tensor2D;
    const z = cut ? (tf.add(scaled, supportBias(scaled, start, end)) as tf.Tensor2D) : scaled;
    const logp = tf.logSoftmax(z);
    const onehot = tf.oneHot(tf.tensor1d(targets.subarray(start, end), "int32"), vocab);
    return { logp, p: tf.exp(logp), onehot };
  };

  // 0 on the kept tokens of each row, CUT elsewhere, from the (detached) scaled logits.
  const reasoning = options.reasoning;
  if (reasoning && reasoning.states.length !== rows) throw new Error(`${reasoning.states.length} block states for ${rows} rows`);
  const masked = reasoning?.states.some((state) => restricts(state, reasoning.mode)) ?? false;
  const truncated = truncates(distribution, vocab);
  const cut = truncated || masked;
  const supportBias = (scaled: tf.Tensor2D, start: number, end: number): tf.Tensor2D => {
    const values = scaled.dataSync();
    const bias = new Float32Array(values.length);
    const row = new Float32Array(vocab);
    const allowed = new Uint8Array(vocab);
    for (let r = 0; r < end - start; r++) {
      let z = values.subarray(r * vocab, (r + 1) * vocab);
      allowed.fill(1);
      const state = reasoning?.states[start + r];
      if (reasoning && state !== undefined && restricts(state, reasoning.mode)) {
        // The mask first: excluded ids leave the row before top-k/top-p rank it.
        const maskedRow = Float32Array.from(z);
        for (let v = 0; v < vocab; v++) {
          if (!isAllowed(v, state, reasoning.mode, reasoning.vocab)) {
            allowed[v] = 0;
            maskedRow[v] = Number.NEGATIVE_INFINITY;
          }
        }
        allowed[targets[start + r]!] = 1; // the sampled token is always kept, as for top-k/top-p
        z = maskedRow;
      }
      if (truncated) supportOfRow(z, distribution, targets[start + r]!, row);
      else row.fill(1);
      for (let v = 0; v < vocab; v++) bias[r * vocab + v] = row[v] === 1 && allowed[v] === 1 ? 0 : CUT;
    }
    return tf.tensor2d(bias, [end - start, vocab]);
  };

  const transposedHead = (head: tf.Tensor2D) => (ops.kind === "xnnpack" ? tf.transpose(head) : null);

  // A trainable head is saved with the hidden states: one merged from token rows is a
  // temporary the caller's tidy disposes before the backward pass runs.
  const forward = (h: tf.Tensor2D, save: tf.GradSaveFunc, head: tf.Tensor2D) => {
    save(trainableHead ? [h, head] : [h]);
    const headT = transposedHead(head);
    const pieces = chunks.map(([start, end]) =>
      tf.tidy(() => {
        const { logp, p, onehot } = chunkDistribution(h, head, headT, start, end);
        const target = tf.sum(tf.mul(logp, onehot), -1);
        const entropy = tf.neg(tf.sum(tf.mul(p, logp), -1));
        return tf.stack([target, entropy], 1) as tf.Tensor2D;
      }),
    );
    headT?.dispose();
    const value: tf.Tensor2D = pieces.length === 1 ? pieces[0]! : tf.concat(pieces, 0);
    if (pieces.length > 1) tf.dispose(pieces);
    return {
      value,
      gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => {
        const savedHidden = saved[0] as tf.Tensor2D;
        const head = trainableHead ? (saved[1] as tf.Tensor2D) : headInput;
        const headT = transposedHead(head);
        const headGradient: { sum: tf.Tensor2D | null } = { sum: null };
        const grads = chunks.map(([start, end]) =>
          tf.tidy(() => {
            const { logp, p, onehot } = chunkDistribution(savedHidden, head, headT, start, end);
            const [dTarget, dEntropy] = tf.split(rowsOf(dy, start, end), 2, 1);
            const entropy = tf.neg(tf.sum(tf.mul(p, logp), -1, true));
            const dz = tf.sub(tf.mul(dTarget!, tf.sub(onehot, p)), tf.mul(dEntropy!, tf.mul(p, tf.add(logp, entropy)))) as tf.Tensor2D;
            if (trainableHead) {
              const part = tf.div(ops.product(dz, rowsOf(savedHidden, start, end), true, false), temperature) as tf.Tensor2D;
              const previous = headGradient.sum;
              headGradient.sum = tf.keep(previous ? (tf.add(previous, part) as tf.Tensor2D) : part);
              previous?.dispose();
            }
            return tf.div(ops.product(dz, head), temperature) as tf.Tensor2D;
          }),
        );
        headT?.dispose();
        const hiddenGrad = grads.length === 1 ? grads[0]! : tf.concat(grads, 0);
        if (grads.length > 1) tf.dispose(grads);
        return trainableHead ? [hiddenGrad, headGradient.sum!] : hiddenGrad;
      },
    };
  };
  const trainableHead = isTrainable(headInput) || options.headTrainable === true;
  if (trainableHead) {
    // The head is an input of the op, so that tfjs routes its gradient to the variable.
    return customGradient((h: tf.Tensor2D, headIn: tf.Tensor2D, save: tf.GradSaveFunc) => forward(h, save, headIn))(hidden, headInput);
  }
  return customGradient((h: tf.Tensor2D, save: tf.GradSaveFunc) => forward(h, save, headInput))(hidden);
}
