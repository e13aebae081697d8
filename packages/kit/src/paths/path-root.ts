// Every path a client names (a dataset, eval data, a checkpoint, an adapter, a model, a run
// id) and every file a service keeps under a configured root (runs, checkpoints, adapters)
// is reached here: relative paths only, no `..`, no symlink anywhere below the root (one
// planted there is refused, never followed: root-directory.ts walks one name at a time from
// an open directory), regular files only where a file is read (no FIFO, device or
// directory), a size cap checked before reading, and errors that name the field and the
// path relative to the root but never where a symlink points nor anything read from a file.
import path from "node:path";
import { PathError } from "./path-error.js";
import { makeDirectorySync } from "./directory-sync.js";
import { relativeNames } from "./relative-names.js";
import { RootDirectory, type DirectoryEntry, type OpenedFile } from "./root-directory.js";

export { PathError } from "./path-error.js";

export interface PathRootOptions {
  /** The directory every path resolves under (made absolute against the working directory). */
  dir: string;
  /** The config key that sets it, named in errors so the operator knows what to change. */
  key: string;
}

/** One configured root and the checks every path under it passes. */
export class PathRoot {
  /** The root as an absolute path (not through realpath: it may not exist yet). Symlinks above and at it are the operator's and are followed. */
  readonly dir: string;
  readonly key: string;

  constructor(options: PathRootOptions) {
    this.dir = path.resolve(options.dir);
    this.key = options.key;
  }

  /**
   * The absolute path of `given` under the root, checked by its text alone: not empty, no NUL,
   * not absolute, no `..` segment. Only for naming it: the disk is reached through openDirectory,
   * openFile, readBytes and the other methods, which refuse symlinks on the way.
   */
  resolve(given: string, field: string): string {
    relativeNames(given, field, this.key);
    return path.join(this.dir, given);
  }

  /** The directory `given` under the root, held open (made with its parents when `create`). Close it after use. */
  async openDirectory(given: string, field: string, options: { create?: boolean } = {}): Promise<RootDirectory> {
    relativeNames(given, field, this.key);
    const root = await RootDirectory.openRoot(this.dir, this.key, field, options.create === true);
    try {
      return await root.directory(given, options);
    } finally {
      await root.close();
    }
  }

  /** Runs `use` on the directory `given` under the root, closed afterwards. */
  async withDirectory<T>(
    given: string,
    field: string,
    options: { create?: boolean },
    use: (directory: RootDirectory) => Promise<T>,
  ): Promise<T> {
    const directory = await this.openDirectory(given, field, options);
    try {
      return await use(directory);
    } finally {
      await directory.close();
    }
  }

  /** A regular file under the root, opened for reading (to stream it). Close its handle after use. */
  async openFile(given: string, field: string): Promise<OpenedFile> {
    return this.withRoot(given, field, false, (root) => root.openFile(given));
  }

  /** The entries of the directory `given` under the root, as it lists them (symlinks as symlinks). */
  async list(given: string, field: string): Promise<DirectoryEntry[]> {
    return this.withDirectory(given, field, {}, (directory) => directory.entries());
  }

  /** A regular file under the root, read whole as UTF-8 after its size is checked against `maxBytes`. */
  async readText(given: string, field: string, maxBytes: number): Promise<string> {
    return (await this.readBytes(given, field, maxBytes)).toString("utf8");
  }

  async readBytes(given: string, field: string, maxBytes: number): Promise<Buffer> {
    return this.withRoot(given, field, false, (root) => root.readBytes(given, maxBytes));
  }

  /**
   * Checks that `given` is an existing regular file or directory under the root, reached
   * without a symlink, and returns its absolute path. Only for a reader that must be given a
   * path (another process): the path may change after the check. Read through openDirectory
   * or openFile instead wherever this process reads.
   */
  async existing(given: string, field: string, kind: "file" | "directory"): Promise<string> {
    if (kind === "directory") return this.withDirectory(given, field, {}, async (directory) => directory.path);
    return this.withRoot(given, field, false, async (root) => {
      const { handle } = await root.openFile(given);
      await handle.close();
      return path.join(root.path, ...relativeNames(given, field, this.key));
    });
  }

  /** Makes the directory `given` under the root with its parents (no symlink on the way) and returns its absolute path. */
  async directoryForWrite(given: string, field: string): Promise<string> {
    return this.withDirectory(given, field, { create: true }, async (directory) => directory.path);
  }

  /** directoryForWrite for code that must stay synchronous (a process's log files). */
  directoryForWriteSync(given: string, field: string): string {
    return makeDirectorySync(this.dir, this.key, given, field);
  }

  /**
   * Every named file inside `dir` (a directory under the root, as existing() returned it) is a
   * regular file reached without a symlink; a missing one is the reader's error to report.
   */
  async checkFiles(dir: string, names: readonly string[], field: string): Promise<void> {
    await this.withRoot(".", field, false, async (root) => {
      const relative = path.relative(root.path, dir);
      if (relative.startsWith("..") || path.isAbsolute(relative))
        throw new PathError(`${field}: the directory checked is not under ${this.key}`, field, "invalid");
      for (const name of names) {
        const opened = await root.openFile(path.join(relative, name)).catch((error: unknown) => {
          if (error instanceof PathError && error.code === "missing") return undefined;
          throw error;
        });
        await opened?.handle.close();
      }
    });
  }

  /** `absolute` (a path under the root) as the relative path a client would give. */
  relative(absolute: string): string {
    return path.relative(this.dir, absolute);
  }

  private async withRoot<T>(given: string, field: string, create: boolean, use: (root: RootDirectory) => Promise<T>): Promise<T> {
    relativeNames(given, field, this.key);
    const root = await RootDirectory.openRoot(this.dir, this.key, field, create);
    try {
      return await use(root);
    } finally {
      await root.close();
    }
  }
}
