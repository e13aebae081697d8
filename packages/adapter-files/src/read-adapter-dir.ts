// An adapter directory as written by a receiver (runs/<id>/adapters/policy-v<N>/), read
// back to be sent again: its regular files, in path order. Read through a directory opened
// under a root (the kit's RootDirectory): a symlink among its entries is not one of them.
import type { AdapterFile } from "./send-adapter.js";

/** What reading needs of the directory (the kit's RootDirectory has it). */
export interface AdapterDirectoryReader {
  entries(): Promise<{ name: string; kind: string }[]>;
  readBytes(name: string, maxBytes: number): Promise<Uint8Array>;
}

export async function readAdapterDir(dir: AdapterDirectoryReader): Promise<AdapterFile[]> {
  const names = (await dir.entries())
    .filter((e) => e.kind === "file")
    .map((e) => e.name)
    .sort();
  return Promise.all(names.map(async (name) => ({ path: name, data: await dir.readBytes(name, Number.MAX_SAFE_INTEGER) })));
}
