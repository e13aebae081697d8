// The additive attention bias: 0 where a query may look at a key, a large negative number
// where it may not (a later position, or a padding key). Finite rather than -Infinity so
// that a query that sees no key at all (a padding row) gives uniform weights, not NaN,
// which would poison gradients even where the loss masks it out.
import * as tf from "@tensorflow/tfjs-core";

const BLOCKED = -1e9;

/**
 * Bias [batch, 1, 1, queryLength, keyLength] for queries at key positions
 * pastLength … pastLength + queryLength − 1, given which keys are real tokens
 * (keyMask, row-major [batch, keyLength], 1 = token, 0 = padding).
 */
export function attentionBias(keyMask: Uint8Array, batch: number, queryLength: number, keyLength: number): tf.Tensor {
  const pastLength = keyLength - queryLength;
  const bias = new Float32Array(batch * queryLength * keyLength);
  for (let b = 0; b < batch; b++) {
    for (let q = 0; q < queryLength; q++) {
      const row = (b * queryLength + q) * keyLength;
      for (let k = 0; k < keyLength; k++) {
        if (k > pastLength + q || keyMask[b * keyLength + k] === 0) bias[row + k] = BLOCKED;
      }
    }
  }
  return tf.tensor(bias, [batch, 1, 1, queryLength, keyLength]);
}
