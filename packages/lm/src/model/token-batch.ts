// Sequences of different lengths as one left-padded batch: every sequence ends in the last
// column, so the newest token of each row sits at the same index (what decoding and
// completion scoring rely on). Positions count real tokens only, as HF's generate computes
// them (cumsum(mask) − 1), so padding does not shift RoPE.
import { ModelInputError } from "../errors.js";
import type { ModelConfig } from "./model-config.js";

export interface TokenBatch {
  batch: number;
  length: number;
  /** [batch, length] row-major; padding holds id 0. */
  ids: Int32Array;
  /** [batch, length]; 1 for a token, 0 for padding. */
  keyMask: Uint8Array;
  /** [batch, length]; position of each token, 0 for padding. */
  positions: Int32Array;
  /** Unpadded length of each row. */
  lengths: number[];
}

/** Checks that every id is a token of the model and every sequence fits its context. */
export function validateTokenIds(sequences: readonly (readonly number[])[], config: ModelConfig, what = "sequence"): void {
  if (sequences.length === 0) throw new ModelInputError(`no ${what}s given; at least one is needed`);
  sequences.forEach((sequence, row) => {
    if (sequence.length > config.maxPositionEmbeddings) {
      throw new ModelInputError(
        `${what} ${row} has ${sequence.length} tokens; the model's context (max_position_embeddings) is ${config.maxPositionEmbeddings}`,
      );
    }
    sequence.forEach((id, column) => {
      if (!Number.isInteger(id) || id < 0 || id >= config.vocabSize) {
        throw new ModelInputError(`${what} ${row}, token ${column}: id ${id} is not in the vocabulary [0, ${config.vocabSize})`);
      }
    });
  });
}

export function leftPaddedBatch(sequences: readonly (readonly number[])[], config: ModelConfig): TokenBatch {
  validateTokenIds(sequences, config);
  sequences.forEach((sequence, row) => {
    if (sequence.length === 0) throw new ModelInputError(`sequence ${row} is empty; every sequence needs at least one token`);
  });
  const batch = sequences.length;
  const length = Math.max(...sequences.map((s) => s.length));
  const ids = new Int32Array(batch * length);
  const keyMask = new Uint8Array(batch * length);
  const positions = new Int32Array(batch * length);
  sequences.forEach((sequence, row) => {
    const start = row * length + (length - sequence.length);
    sequence.forEach((id, i) => {
      ids[start + i] = id;
      keyMask[start + i] = 1;
      positions[start + i] = i;
    });
  });
  return { batch, length, ids, keyMask, positions, lengths: sequences.map((s) => s.length) };
}
