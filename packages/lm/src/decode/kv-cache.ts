// The keys and values of every layer for the tokens decoded so far, with the padding mask
// and the next RoPE position of each row. Each pass appends one column; the tensors of the
// previous pass are released as soon as the new ones exist.
import * as tf from "@tensorflow/tfjs-core";
import type { KeyValue } from "../model/attention.js";
import type { TokenBatch } from "../model/token-batch.js";

export class KvCache {
  private layers: KeyValue[] | null = null;
  /** [batch, length]: 1 for a token, 0 for left padding. */
  private mask: Uint8Array;
  private length: number;
  /** Position the next token of each row takes. */
  private readonly nextPositions: Int32Array;

  constructor(private readonly prompts: TokenBatch) {
    this.mask = prompts.keyMask;
    this.length = prompts.length;
    this.nextPositions = Int32Array.from(prompts.lengths);
  }

  /** What the next pass attends to: the cached layers (null before the prompt pass). */
  get past(): KeyValue[] | null {
    return this.layers;
  }

  get keyMask(): Uint8Array {
    return this.mask;
  }

  /** Makes room for one more token per row; returns the positions those tokens take. */
  appendColumn(): Int32Array {
    const batch = this.prompts.batch;
    const grown = new Uint8Array(batch * (this.length + 1));
    for (let row = 0; row < batch; row++) {
      grown.set(this.mask.subarray(row * this.length, (row + 1) * this.length), row * (this.length + 1));
      grown[row * (this.length + 1) + this.length] = 1;
    }
    this.mask = grown;
    this.length += 1;
    const positions = Int32Array.from(this.nextPositions);
    for (let row = 0; row < batch; row++) this.nextPositions[row]! += 1;
    return positions;
  }

  /** Takes a pass's `present` as the cache and releases the previous one. */
  update(present: KeyValue[]): void {
    this.dispose();
    this.layers = present;
  }

  dispose(): void {
    for (const { keys, values } of this.layers ?? []) tf.dispose([keys, values]);
    this.layers = null;
  }
}
