// A small seeded generator of uniform numbers in [0, 1) (mulberry32: 32-bit state, passes
// the usual statistical batteries for this use), so that seeded sampling is reproducible
// across runs and machines. Not for cryptography.
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/** Independent streams for the rows of a batch: row r of seed s never depends on the batch size. */
export function rowSeed(seed: number, row: number): number {
  // Spread rows apart by the golden-ratio constant so nearby seeds do not share streams.
  return (seed + Math.imul(row + 1, 0x9e3779b9)) >>> 0;
}
