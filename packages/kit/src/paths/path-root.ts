// Every path a client names (a dataset, eval data, a checkpoint, an adapter, a model, a run
// id) is resolved here, under a root the operator configured: relative paths only, no `..`,
// no symlink that leads out of the root, regular files only (no FIFO, device or directory
// where a file is read), a size cap checked before reading, and errors that name the field
// and the path given but never anything read from the file or the directory.
import { constants } from "node:fs";
import { lstat, mkdir, open, realpath, stat } from "node:fs/promises";
import path from "node:path";

/** Why a client-given path was refused; `code` says which status answers it. */
export class PathError extends Error {
  override readonly name = "PathError";
  constructor(
    message: string,
    /** The request field or config key the path came from. */
    readonly field: string,
    /** invalid: a malformed or escaping path (INVALID_ARGUMENT); missing: nothing there (NOT_FOUND); too_large: over the cap (RESOURCE_EXHAUSTED). */
    readonly code: "invalid" | "missing" | "too_large",
  ) {
    super(message);
  }
}

export interface PathRootOptions {
  /** The directory every path resolves under (made absolute against the working directory). */
  dir: string;
  /** The config key that sets it, named in errors so the operator knows what to change. */
  key: string;
}

/** One configured root and the checks every path under it passes. */
export class PathRoot {
  /** The root as an absolute path (not yet through realpath: it may not exist yet). */
  readonly dir: string;
  readonly key: string;

  constructor(options: PathRootOptions) {
    this.dir = path.resolve(options.dir);
    this.key = options.key;
  }

  /**
   * The absolute path of `given` under the root, checked by its text alone: not empty, no NUL,
   * not absolute, no `..` segment. Symlinks are checked by the methods that touch the disk.
   */
  resolve(given: string, field: string): string {
    if (given === "") throw new PathError(`${field} is empty; give a path relative to ${this.key}`, field, "invalid");
    if (given.includes("\0")) throw new PathError(`${field} holds a NUL character`, field, "invalid");
    if (path.isAbsolute(given) || /^[A-Za-z]:[\\/]/.test(given))
      throw new PathError(`${field} "${given}" is absolute; give a path relative to ${this.key}`, field, "invalid");
    if (given.split(/[\\/]/).includes(".."))
      throw new PathError(`${field} "${given}" contains "..": paths stay inside ${this.key}`, field, "invalid");
    return path.join(this.dir, given);
  }

  /** A regular file under the root, read whole as UTF-8 after its size is checked against `maxBytes`. */
  async readText(given: string, field: string, maxBytes: number): Promise<string> {
    return (await this.readBytes(given, field, maxBytes)).toString("utf8");
  }

  async readBytes(given: string, field: string, maxBytes: number): Promise<Buffer> {
    const real = await this.existing(given, field, "file");
    // O_NONBLOCK: a FIFO swapped in after the check must not hang open(); O_NOFOLLOW: nor a symlink.
    const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch(
      (error: NodeJS.ErrnoException) => {
        throw new PathError(`${field} "${given}" cannot be opened (${error.code ?? "error"})`, field, "invalid");
      },
    );
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw notRegular(given, field);
      if (info.size > maxBytes) throw tooLarge(given, field, maxBytes);
      // Read no more than the cap even if the file grows, or reports no size (procfs-like files).
      const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled > maxBytes) throw tooLarge(given, field, maxBytes);
      return buffer.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  /**
   * The real path of an existing file or directory under the root: a symlink may point
   * anywhere inside the root, never out of it; a file must be a regular file.
   */
  async existing(given: string, field: string, kind: "file" | "directory"): Promise<string> {
    const resolved = this.resolve(given, field);
    const root = await this.realRoot(field);
    let real: string;
    try {
      real = await realpath(resolved);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR")
        throw new PathError(`${field} "${given}" does not exist under ${this.key}`, field, "missing");
      throw new PathError(`${field} "${given}" cannot be resolved (${code ?? "error"})`, field, "invalid");
    }
    if (!isInside(root, real)) throw escapes(given, field, this.key);
    const info = await stat(real);
    if (kind === "directory" && !info.isDirectory()) throw new PathError(`${field} "${given}" is not a directory`, field, "invalid");
    if (kind === "file" && !info.isFile()) throw notRegular(given, field);
    return real;
  }

  /**
   * A directory under the root to write into, created with its parents: every part that
   * already exists must stay inside the root once symlinks are followed.
   */
  async directoryForWrite(given: string, field: string): Promise<string> {
    const resolved = this.resolve(given, field);
    await mkdir(this.dir, { recursive: true });
    const root = await this.realRoot(field);
    // The deepest part that exists decides where mkdir would write.
    let existing = resolved;
    while (!(await exists(existing))) existing = path.dirname(existing);
    if (!isInside(root, await realpath(existing))) throw escapes(given, field, this.key);
    await mkdir(resolved, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      throw new PathError(`${field} "${given}" cannot be created (${error.code ?? "error"})`, field, "invalid");
    });
    // Checked again once it exists: a part swapped for a symlink meanwhile is caught here.
    return this.existing(given, field, "directory");
  }

  /** Every named file inside `dir` (a real directory under the root) is a regular file under the root. */
  async checkFiles(dir: string, names: readonly string[], field: string): Promise<void> {
    const root = await this.realRoot(field);
    for (const name of names) {
      const file = path.join(dir, name);
      const shown = path.relative(root, file);
      const real = await realpath(file).catch(() => undefined);
      if (real === undefined) continue; // a missing file is the reader's error to report
      if (!isInside(root, real)) throw escapes(shown, field, this.key);
      if (!(await stat(real)).isFile()) throw notRegular(shown, field);
    }
  }

  /** `absolute` (a path under the root) as the relative path a client would give. */
  relative(absolute: string): string {
    return path.relative(this.dir, absolute);
  }

  private async realRoot(field: string): Promise<string> {
    try {
      return await realpath(this.dir);
    } catch {
      throw new PathError(`${field}: ${this.key} does not exist on this server`, field, "missing");
    }
  }
}

function isInside(root: string, real: string): boolean {
  const rel = path.relative(root, real);
  return rel === "" || (!rel.startsWith(`..${path.sep}`) && rel !== ".." && !path.isAbsolute(rel));
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

function escapes(given: string, field: string, key: string): PathError {
  return new PathError(`${field} "${given}" leads out of ${key} (through a symlink)`, field, "invalid");
}

function notRegular(given: string, field: string): PathError {
  return new PathError(`${field} "${given}" is not a regular file (a directory, FIFO or device is refused)`, field, "invalid");
}

function tooLarge(given: string, field: string, maxBytes: number): PathError {
  return new PathError(`${field} "${given}" is larger than ${maxBytes} bytes, the most this server reads`, field, "too_large");
}
