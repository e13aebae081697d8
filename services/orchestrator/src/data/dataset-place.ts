// Where a dataset's files are read from: under the orchestrator's data_root (every client-given
// path, through kit/paths: no `..`, no symlink below the root) or, for a command that reads
// the user's own files before any service starts, the local file system.
import { lstat, open, readdir } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import type { PathRoot } from "@lean-grpo/kit";

export interface OpenedDatasetFile {
  handle: FileHandle;
  size: number;
}

export interface DatasetPlace {
  /** Whether `relative` is a directory (a `datasets` folder) rather than a file. */
  isDirectory(relative: string): Promise<boolean>;
  /** A regular file, opened for reading; the caller closes it. */
  open(relative: string): Promise<OpenedDatasetFile>;
  /** The names in a directory. */
  list(relative: string): Promise<string[]>;
}

/** Files under a configured root (StartRun's dataset_path, eval.data): named by `field` in every refusal. */
export function rootPlace(root: PathRoot, field: string): DatasetPlace {
  return {
    async isDirectory(relative) {
      // Text checks first (no `..`, not absolute); the reads below refuse symlinks on the way.
      const info = await lstat(root.resolve(relative, field)).catch(() => undefined);
      return info?.isDirectory() === true;
    },
    open: (relative) => root.openFile(relative, field),
    list: async (relative) => (await root.list(relative, field)).map((entry) => entry.name),
  };
}

/** The local file system, paths relative to the working directory (the CLI's pre-flight). */
export function localPlace(): DatasetPlace {
  return {
    async isDirectory(relative) {
      const info = await lstat(relative).catch(() => undefined);
      return info?.isDirectory() === true;
    },
    async open(relative) {
      const handle = await open(relative, "r");
      const info = await handle.stat();
      if (!info.isFile()) {
        await handle.close();
        throw new Error(`${relative} is not a regular file`);
      }
      return { handle, size: info.size };
    },
    list: (relative) => readdir(relative),
  };
}

export function joinRelative(dir: string, name: string): string {
  return dir === "." || dir === "" ? name : path.join(dir, name);
}
