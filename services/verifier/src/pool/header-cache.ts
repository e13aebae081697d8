// A worker's elaborated headers: header text → the REPL env id it produced, least
// recently used first out. Forgetting an env id frees nothing in the REPL (it keeps
// every snapshot until the process is recycled); the bound keeps a worker from
// being picked for a header it elaborated long ago in place of one that is warm.

export class HeaderCache {
  // A Map iterates in insertion order: re-inserting on use keeps the oldest first.
  private readonly entries = new Map<string, number>();

  constructor(private readonly capacity: number) {
    if (capacity < 1) throw new RangeError("header cache capacity must be at least 1");
  }

  get(header: string): number | undefined {
    const env = this.entries.get(header);
    if (env !== undefined) {
      this.entries.delete(header);
      this.entries.set(header, env);
    }
    return env;
  }

  has(header: string): boolean {
    return this.entries.has(header);
  }

  set(header: string, env: number): void {
    this.entries.delete(header);
    this.entries.set(header, env);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  clear(): void {
    this.entries.clear();
  }

  headers(): string[] {
    return [...this.entries.keys()];
  }
}
