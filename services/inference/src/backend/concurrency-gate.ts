// Bounds the requests in flight to a backend. Excess callers wait in order; a
// waiter whose call is cancelled or times out leaves the line.
export class ConcurrencyGate {
  private active = 0;
  private readonly waiting: Array<{ resolve: () => void; reject: (e: unknown) => void; signal: AbortSignal; onAbort: () => void }> = [];

  constructor(private readonly limit: number) {}

  async run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    await this.enter(signal);
    try {
      return await work();
    } finally {
      this.leave();
    }
  }

  get inFlight(): number {
    return this.active;
  }

  private enter(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private leave(): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.active--;
      return;
    }
    next.signal.removeEventListener("abort", next.onAbort);
    next.resolve(); // the slot passes to the next waiter
  }
}
