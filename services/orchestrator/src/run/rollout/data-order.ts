// Which prompts a step trains on, as a pure function of (seed, step): a resumed run
// replays exactly the order the stopped one would have used. Epochs are seeded
// shuffles of the dataset; the batch of step k is positions [(k-1)·B, k·B) of that stream.
import { SeededRandom } from "@lean-grpo/random";

export class DataOrder {
  // Typed memory: a corpus of millions of records keeps 4 bytes a record per epoch in use.
  private readonly epochs = new Map<number, Uint32Array>();

  constructor(
    private readonly size: number,
    private readonly seed: number,
  ) {}

  /** Dataset indices of `count` prompts starting at stream position `start`. */
  slice(start: number, count: number): number[] {
    return Array.from({ length: count }, (_, i) => this.at(start + i));
  }

  /** The primary batch of a 1-based step. */
  batch(step: number, batchSize: number): number[] {
    return this.slice((step - 1) * batchSize, batchSize);
  }

  private at(position: number): number {
    const epoch = Math.floor(position / this.size);
    return this.permutation(epoch)[position % this.size]!;
  }

  private permutation(epoch: number): Uint32Array {
    let order = this.epochs.get(epoch);
    if (!order) {
      const random = new SeededRandom((this.seed * 1_000_003 + epoch) >>> 0);
      order = Uint32Array.from({ length: this.size }, (_, i) => i);
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(random.next() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      // Only the epoch in use and the one before it: positions advance through the stream.
      for (const old of this.epochs.keys()) if (old < epoch - 1) this.epochs.delete(old);
      this.epochs.set(epoch, order);
    }
    return order;
  }
}
