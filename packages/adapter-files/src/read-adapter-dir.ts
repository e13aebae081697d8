// An adapter directory as written by a receiver (runs/<id>/adapters/policy-v<N>/), read
// back to be sent again: its regular files, in path order.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { AdapterFile } from "./send-adapter.js";

export async function readAdapterDir(dir: string): Promise<AdapterFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();
  return Promise.all(names.map(async (name) => ({ path: name, data: await readFile(path.join(dir, name)) })));
}
