// Per-token constants (old, reference, sampler logprobs) in the right-aligned [rows, C]
// layout of completionLogprobs: token i of a row of length n sits at column C − n + i.
import * as tf from "@tensorflow/tfjs-core";

export function rightAligned(rows: readonly (readonly number[])[], window: number): tf.Tensor2D {
  const out = new Float32Array(rows.length * window);
  rows.forEach((row, r) => {
    row.forEach((v, i) => {
      out[r * window + window - row.length + i] = v;
    });
  });
  return tf.tensor2d(out, [rows.length, window]);
}

/** One value per row as a [rows, 1] column. */
export function column(values: readonly number[]): tf.Tensor2D {
  return tf.tensor2d(Float32Array.from(values), [values.length, 1]);
}

/** The inverse of rightAligned: row r's last lengths[r] values of a [rows, window] array, keyed by keys[r]. */
export function rowsOfRightAligned(
  values: ArrayLike<number> & { subarray(start: number, end: number): ArrayLike<number> },
  window: number,
  lengths: readonly number[],
  keys: readonly number[],
): Map<number, number[]> {
  return new Map(lengths.map((length, r) => [keys[r]!, Array.from(values.subarray(r * window + window - length, (r + 1) * window))]));
}
