// The adapters loaded in the backend, by name and policy version. Each version
// keeps its own name, so requests in flight finish on the version they started
// with; once more than `keep` newer versions of the training policy (the names
// adapterName gives, policy-vN) are loaded, an old one is unloaded as soon as no
// request uses it. An adapter under another name (an evaluation's) is no version of
// that policy: it stays until UnloadAdapter, and never pushes a policy version out.
import { Code, ConnectError } from "@connectrpc/connect";
import { MISSING_ADAPTER_HEADER, parseAdapterName } from "@lean-grpo/adapter-files";

export interface LoadedAdapter {
  name: string;
  version: bigint;
  path: string;
  loadedAt: Date;
}

interface Entry extends LoadedAdapter {
  inFlight: number;
  retiring: boolean;
  used: boolean;
  idle?: () => void;
}

export class AdapterRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly keep: number,
    private readonly unload: (name: string) => Promise<void>,
  ) {}

  list(): LoadedAdapter[] {
    return [...this.entries.values()]
      .filter((e) => !e.retiring)
      .sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : a.loadedAt.getTime() - b.loadedAt.getTime()))
      .map(({ name, version, path, loadedAt }) => ({ name, version, path, loadedAt }));
  }

  has(name: string): boolean {
    const entry = this.entries.get(name);
    return entry !== undefined && !entry.retiring;
  }

  /** Records a loaded adapter and retires the policy versions beyond `keep`; returns their names. */
  add(adapter: LoadedAdapter): string[] {
    this.entries.set(adapter.name, { ...adapter, inFlight: 0, retiring: false, used: false });
    const live = this.list().filter((a) => parseAdapterName(a.name) !== undefined);
    const retired = live.slice(0, Math.max(0, live.length - this.keep)).map((a) => a.name);
    for (const name of retired) void this.retire(name).catch(() => {});
    return retired;
  }

  /** True the first time it is asked about a loaded adapter `name` (not the base model). */
  firstUse(name: string): boolean {
    const entry = this.entries.get(name);
    if (!entry || entry.used) return false;
    entry.used = true;
    return true;
  }

  /**
   * Marks a request as using `name` ("" is the base model); call the result when it ends. An
   * adapter not loaded here is refused, never replaced by another policy: NOT_FOUND, its name
   * in the MISSING_ADAPTER_HEADER metadata so that a caller holding its files can load it and ask again.
   */
  acquire(name: string): () => void {
    if (name === "") return () => {};
    const entry = this.entries.get(name);
    if (!entry || entry.retiring) {
      throw new ConnectError(
        `adapter "${name}" is not loaded; loaded: ${
          this.list()
            .map((a) => a.name)
            .join(", ") || "none"
        }`,
        Code.NotFound,
        { [MISSING_ADAPTER_HEADER]: name },
      );
    }
    entry.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.inFlight--;
      if (entry.inFlight === 0) entry.idle?.();
    };
  }

  /** Stops new requests on `name`, waits for the running ones, then unloads it. */
  async retire(name: string): Promise<LoadedAdapter> {
    const entry = this.entries.get(name);
    if (!entry || entry.retiring) throw new ConnectError(`adapter "${name}" is not loaded`, Code.NotFound);
    entry.retiring = true;
    if (entry.inFlight > 0) await new Promise<void>((resolve) => (entry.idle = resolve));
    try {
      await this.unload(name);
    } finally {
      this.entries.delete(name);
    }
    return { name: entry.name, version: entry.version, path: entry.path, loadedAt: entry.loadedAt };
  }
}
