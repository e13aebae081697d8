// Rows of the embedding table for a list of token ids, differentiable in the table when it
// is trainable (full fine-tuning).
//
// Why a hand-written gradient: tfjs derives a gather's gradient with UnsortedSegmentSum,
// which the wasm backend lacks. The gradient of rows = table[ids] is a scatter-add of the
// incoming rows into a zero table, dTable[ids[i]] += dRows[i]; done here on the host, once
// per pass, in O(ids × hidden) plus the zeroed table.
import * as tf from "@tensorflow/tfjs-core";
import { customGradient } from "../backend/custom-gradient.js";
import { isTrainable } from "./model-weights.js";

/** `differentiable`: the table is trainable or built from trainable rows (an adapter's token rows). */
export function embeddingLookup(table: tf.Tensor2D, ids: Int32Array, differentiable = isTrainable(table)): tf.Tensor2D {
  const [vocab, hidden] = table.shape;
  if (!differentiable) return tf.tidy(() => tf.gather(table, tf.tensor1d(ids, "int32")));
  const op = customGradient((t: tf.Tensor2D, _save: tf.GradSaveFunc) => ({
    value: tf.tidy(() => tf.gather(t, tf.tensor1d(ids, "int32"))) as tf.Tensor2D,
    gradFunc: (dy: tf.Tensor2D) => {
      const rows = dy.dataSync() as Float32Array;
      const grad = new Float32Array(vocab * hidden);
      ids.forEach((id, i) => {
        const from = i * hidden;
        const to = id * hidden;
        for (let h = 0; h < hidden; h++) grad[to + h]! += rows[from + h]!;
      });
      return tf.tensor2d(grad, [vocab, hidden]);
    },
  }));
  return op(table);
}
