// Rows decoding under one adapter, with one KV cache between them: rows join after their
// prompt pass and leave as they finish, between decode passes. The cache is left-padded to
// its longest row (every row's newest key in the last column), so padding adds only exact
// zeros to a row's attention sums, provided the backend's kernels group a row's keys the
// same way: each row's padding is a multiple of `alignment`, the width in which the
// backend's reductions over keys group them (SIMD lanes, blocks). So rows whose lengths
// differ modulo `alignment` go to different batches.
import * as tf from "@tensorflow/tfjs-core";
import type { LoraAdapter } from "../lora/lora-adapter.js";
import type { KeyValue } from "../model/attention.js";
import type { CausalLM } from "../model/causal-lm.js";

/** One sequence being decoded: `token` is fed at `position` in the next pass. */
export interface DecodeRow {
  token: number;
  position: number;
}

export class DecodeBatch<R extends DecodeRow> {
  private rows: R[] = [];
  private layers: KeyValue[] | null = null;
  /** [rows, length] row-major: 1 for a key, 0 for left padding. */
  private mask = new Uint8Array(0);
  private length = 0;

  constructor(
    private readonly model: CausalLM,
    readonly adapter: LoraAdapter | null,
    readonly alignment: number,
  ) {}

  /** Whether rows of `promptLength` tokens under `adapter` can join with exact results. */
  accepts(adapter: LoraAdapter | null, promptLength: number): boolean {
    return adapter === this.adapter && (this.rows.length === 0 || (this.length - promptLength) % this.alignment === 0);
  }

  get size(): number {
    return this.rows.length;
  }

  get members(): readonly R[] {
    return this.rows;
  }

  /**
   * Adds rows whose prompt pass produced `present` ([rows, kv, promptLength, D] per layer,
   * no padding); the batch owns those tensors from here on.
   */
  join(rows: readonly R[], present: KeyValue[], promptLength: number): void {
    if (rows.length === 0) {
      disposeLayers(present);
      return;
    }
    if (!this.accepts(this.adapter, promptLength)) {
      disposeLayers(present);
      throw new Error(`rows of ${promptLength} tokens cannot join a batch of ${this.length} columns at alignment ${this.alignment}`);
    }
    const length = Math.max(this.length, promptLength);
    const mask = new Uint8Array((this.rows.length + rows.length) * length);
    for (let r = 0; r < this.rows.length; r++) {
      mask.set(this.mask.subarray(r * this.length, (r + 1) * this.length), r * length + (length - this.length));
    }
    for (let r = 0; r < rows.length; r++)
      mask.fill(1, (this.rows.length + r) * length + (length - promptLength), (this.rows.length + r + 1) * length);
    const old = this.layers;
    this.layers = old
      ? old.map((kv, layer) =>
          tf.tidy(() => ({
            keys: tf.concat([padLeft(kv.keys, length - this.length), padLeft(present[layer]!.keys, length - promptLength)], 0),
            values: tf.concat([padLeft(kv.values, length - this.length), padLeft(present[layer]!.values, length - promptLength)], 0),
          })),
        )
      : present;
    if (old) {
      disposeLayers(old);
      disposeLayers(present);
    }
    this.rows = [...this.rows, ...rows];
    this.mask = mask;
    this.length = length;
  }

  /** One pass: every row's `token` in; next-token logits [rows, vocab] out, row order as `members`. */
  async step(): Promise<Float32Array> {
    const batch = this.rows.length;
    const length = this.length + 1;
    const keyMask = new Uint8Array(batch * length);
    for (let r = 0; r < batch; r++) {
      keyMask.set(this.mask.subarray(r * this.length, (r + 1) * this.length), r * length);
      keyMask[r * length + this.length] = 1;
    }
    const { hidden, present } = this.model.forward(
      {
        batch,
        queryLength: 1,
        ids: Int32Array.from(this.rows, (row) => row.token),
        positions: Int32Array.from(this.rows, (row) => row.position),
        keyMask,
      },
      { adapter: this.adapter },
      this.layers,
    );
    if (this.layers) disposeLayers(this.layers);
    this.layers = present;
    this.mask = keyMask;
    this.length = length;
    return lastLogits(this.model, hidden, this.adapter);
  }

  /** Keeps the rows `keep` accepts (in order) and drops the cache columns no kept row uses. */
  retain(keep: (row: R) => boolean): R[] {
    const kept: number[] = [];
    const dropped: R[] = [];
    this.rows.forEach((row, index) => {
      if (keep(row)) kept.push(index);
      else dropped.push(row);
    });
    if (dropped.length === 0) return dropped;
    if (kept.length === 0) {
      this.dispose();
      return dropped;
    }
    // Leading columns that are padding in every kept row, in whole multiples of the alignment.
    let unused = this.length;
    for (const r of kept) unused = Math.min(unused, this.mask.subarray(r * this.length, (r + 1) * this.length).indexOf(1));
    unused -= unused % this.alignment;
    const length = this.length - unused;
    const mask = new Uint8Array(kept.length * length);
    kept.forEach((r, i) => {
      mask.set(this.mask.subarray(r * this.length + unused, (r + 1) * this.length), i * length);
    });
    const old = this.layers!;
    this.layers = old.map(({ keys, values }) => ({ keys: selectRows(keys, kept, unused), values: selectRows(values, kept, unused) }));
    disposeLayers(old);
    this.rows = kept.map((r) => this.rows[r]!);
    this.mask = mask;
    this.length = length;
    return dropped;
  }

  dispose(): void {
    if (this.layers) disposeLayers(this.layers);
    this.layers = null;
    this.rows = [];
    this.mask = new Uint8Array(0);
    this.length = 0;
  }
}

/** Logits [batch, vocab] of the last column of hidden states [batch, length, hidden]; disposes `hidden`. */
export async function lastLogits(model: CausalLM, hidden: tf.Tensor3D, adapter: LoraAdapter | null = null): Promise<Float32Array> {
  const [batch, length, size] = hidden.shape;
  const logits = tf.tidy(() => model.logits(tf.reshape(tf.slice(hidden, [0, length - 1, 0], [batch, 1, size]), [batch, size]), adapter));
  hidden.dispose();
  try {
    return (await logits.data()) as Float32Array;
  } finally {
    logits.dispose();
  }
}

/**
 * Rows `rows` of a cache tensor [rows, heads, length, D] (repeats allowed), without its
 * first `dropColumns` columns: block copies in JS. Not tf.gather, which the wasm backend
 * walks element by element (13 % of a batched evaluation's time when rows left the batch
 * after nearly every pass); a copy is exact, so results are unchanged.
 */
export function selectRows(t: tf.Tensor4D, rows: readonly number[], dropColumns = 0): tf.Tensor4D {
  const [, heads, length, depth] = t.shape;
  const columns = length - dropColumns;
  const data = t.dataSync() as Float32Array;
  const out = new Float32Array(rows.length * heads * columns * depth);
  let at = 0;
  for (const row of rows) {
    for (let head = 0; head < heads; head++) {
      const from = ((row * heads + head) * length + dropColumns) * depth;
      out.set(data.subarray(from, from + columns * depth), at);
      at += columns * depth;
    }
  }
  return tf.tensor4d(out, [rows.length, heads, columns, depth]);
}

function padLeft(t: tf.Tensor4D, columns: number): tf.Tensor4D {
  return columns === 0
    ? t
    : tf.pad(t, [
        [0, 0],
        [0, 0],
        [columns, 0],
        [0, 0],
      ]);
}

function disposeLayers(layers: readonly KeyValue[]): void {
  for (const { keys, values } of layers) tf.dispose([keys, values]);
}
