/**
 * Hands values to one async consumer, keeping only the newest unread one: a health
 * watcher needs the current status, so a slow reader gets that rather than a backlog.
 * Iteration ends once the mailbox is closed and the last value has been read.
 */
export class LatestValue<T> implements AsyncIterable<T> {
  private unread: { value: T } | undefined;
  private closed = false;
  private wake: (() => void) | undefined;

  put(value: T): void {
    this.unread = { value };
    this.notify();
  }

  close(): void {
    this.closed = true;
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.unread) {
        const { value } = this.unread;
        this.unread = undefined;
        yield value;
      } else if (this.closed) {
        return;
      } else {
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
