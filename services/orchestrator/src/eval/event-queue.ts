// Turns callbacks into a stream: what a callback pushes, one async consumer reads in order
// until end() (Evaluate streams each problem's result as evaluate() reports it).
/** Events pushed by callbacks, read in order by one async consumer until end(). */
export class EventQueue<T> {
  private readonly items: T[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *drain(): AsyncGenerator<T> {
    for (;;) {
      while (this.items.length > 0) yield this.items.shift()!;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
