// A directory under a root, held open, and every read and write below it. Paths are walked
// one name at a time from an open directory (descriptor-paths.ts says why that is race-free):
// each directory is opened with O_DIRECTORY | O_NOFOLLOW, each file with O_NOFOLLOW, so a
// symlink anywhere below the root is refused, never followed, whenever it was planted. Files
// are written under a fresh name created with O_EXCL | O_NOFOLLOW in the directory already
// open, then renamed over the target in that same directory; appends open with O_NOFOLLOW
// and refuse anything but a regular file with no other hard link. Directories are made with
// mkdir of one name, which never follows a symlink, and then opened like any other.
import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { lstat, mkdir, open, readdir, realpath, rename, rmdir, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { descriptorPathsWork, entryPath } from "./descriptor-paths.js";
import {
  PathError,
  failed,
  hardLinked,
  missing,
  notDirectory,
  notRegular,
  rootMissing,
  symlinkRefused,
  tooLarge,
  type PathPlace,
} from "./path-error.js";
import { relativeNames } from "./relative-names.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;
const DIRECTORY = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// O_NONBLOCK: a FIFO in a file's place must not hang open(); it is refused once opened.
const READ = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const CREATE = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
const APPEND = O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK;

export type EntryKind = "file" | "directory" | "symlink" | "other";

export interface DirectoryEntry {
  name: string;
  /** As the directory lists it: a symlink is a symlink, never what it points to. */
  kind: EntryKind;
}

/** A regular file opened for reading, and its size when it was opened. */
export interface OpenedFile {
  handle: FileHandle;
  size: number;
}

/** A directory made afresh for a writer (RootDirectory.freshDirectory). */
export interface FreshDirectory {
  /** Where it is on this host, for messages and for another process given it. */
  readonly path: string;
  /** A new file below it; nothing there is replaced and no symlink followed. */
  createFile(relative: string, options?: { mode?: number }): Promise<FileHandle>;
  /** Releases it; `keep` false removes it and everything written into it. */
  close(keep: boolean): Promise<void>;
}

export class RootDirectory {
  private closed = false;

  private constructor(
    private readonly handle: FileHandle,
    /** Where it is on this host: for messages, and for another process that must read it by path (vLLM). Never resolved again here. */
    readonly path: string,
    /** Its path relative to the root, "" for the root itself; errors name paths this way. */
    readonly relativePath: string,
    /** The config key of the root, named in errors. */
    readonly key: string,
    /** The request field or config key the paths came from, named in errors. */
    readonly field: string,
  ) {}

  /** The root itself (`dir`, set by the operator, so symlinks above and at it are followed); made first when `create`. */
  static async openRoot(dir: string, key: string, field: string, create: boolean): Promise<RootDirectory> {
    if (create) await mkdir(dir, { recursive: true }).catch(() => {}); // a failure shows when it is opened
    let handle: FileHandle;
    try {
      handle = await open(dir, O_RDONLY | O_DIRECTORY);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw rootMissing(field, key);
      throw new PathError(`${field}: ${key} cannot be opened (${(error as NodeJS.ErrnoException).code ?? "error"})`, field, "invalid");
    }
    const real = await realpath(dir).catch(() => path.resolve(dir));
    return new RootDirectory(handle, real, "", key, field);
  }

  /** The directory at `relative` below this one, made with its parents when `create`. Close it after use. */
  async directory(relative: string, options: { create?: boolean } = {}): Promise<RootDirectory> {
    const names = relativeNames(relative, this.field, this.key);
    if (names.length === 0) return this.child(".", false, this.relativePath);
    return this.walk(names, options.create === true, this.shown(names.join("/")));
  }

  /** Runs `use` on the directory at `relative` below this one, closed afterwards. */
  async withDirectory<T>(relative: string, options: { create?: boolean }, use: (directory: RootDirectory) => Promise<T>): Promise<T> {
    const directory = await this.directory(relative, options);
    try {
      return await use(directory);
    } finally {
      await directory.close();
    }
  }

  /** A regular file below this directory, opened for reading. Close its handle after use. */
  async openFile(relative: string): Promise<OpenedFile> {
    return this.inParent(relative, false, (parent, name, requested) => parent.openFileHere(name, requested));
  }

  /** A regular file below this directory, read whole once its size is checked against `maxBytes`. */
  async readBytes(relative: string, maxBytes: number): Promise<Buffer> {
    const { handle, size } = await this.openFile(relative);
    const place = this.place(this.shown(relativeNames(relative, this.field, this.key).join("/")));
    try {
      if (size > maxBytes) throw tooLarge(place, maxBytes);
      // Read no more than the cap even if the file grows, or reports no size (procfs-like files).
      const buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled > maxBytes) throw tooLarge(place, maxBytes);
      return buffer.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  async readText(relative: string, maxBytes: number): Promise<string> {
    return (await this.readBytes(relative, maxBytes)).toString("utf8");
  }

  /**
   * Replaces (or creates) the file at `relative` with `data`, making missing directories: written
   * under a fresh name in the same directory, then renamed over it, so a reader sees the old
   * file or the new one and a symlink in its place is refused, never written through.
   */
  async writeFile(relative: string, data: string | Uint8Array, options: { mode?: number } = {}): Promise<void> {
    await this.inParent(relative, true, (parent, name) => parent.replaceHere(name, data, options.mode ?? 0o666));
  }

  /**
   * Refuses now what writeFile would refuse at `relative` (a symlink on the way or in its place,
   * something other than a regular file there), creating nothing: a writer of several files
   * checks them all first, so that a refused request leaves nothing half-written.
   */
  async checkWritable(relative: string): Promise<void> {
    try {
      await this.inParent(relative, false, async (parent, name) => {
        const present = await lstat(parent.entry(name)).catch(() => undefined);
        if (present?.isSymbolicLink()) throw symlinkRefused(parent.place(parent.shown(name)));
        if (present !== undefined && !present.isFile()) throw notRegular(parent.place(parent.shown(name)));
      });
    } catch (error) {
      if (!(error instanceof PathError) || error.code !== "missing") throw error; // missing parents are made by writeFile
    }
  }

  /** Appends `data` to the regular file at `relative`, created (with its directories) when missing. */
  async appendFile(relative: string, data: string | Uint8Array): Promise<void> {
    const handle = await this.openAppend(relative);
    try {
      await handle.appendFile(data);
    } finally {
      await handle.close();
    }
  }

  /** The regular file at `relative`, created when missing, opened for appending (a stream's `fd`). Close it after use. */
  async openAppend(relative: string): Promise<FileHandle> {
    return this.inParent(relative, true, (parent, name, requested) => parent.openAppendHere(name, requested));
  }

  /** A new regular file at `relative` (its directories made), opened for writing; refused if anything is there already. Close it after use. */
  async createFile(relative: string, options: { mode?: number } = {}): Promise<FileHandle> {
    return this.inParent(relative, true, (parent, name, requested) =>
      open(parent.entry(name), CREATE, options.mode ?? 0o666).catch(async (error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") {
          const present = await lstat(parent.entry(name)).catch(() => undefined);
          if (present?.isSymbolicLink()) throw symlinkRefused(parent.place(parent.shown(name)));
          throw new PathError(`${this.field} "${parent.shown(name)}" exists already`, this.field, "invalid");
        }
        throw await parent.refusal(name, error, "file", requested);
      }),
    );
  }

  /**
   * The directory at `relative` made afresh (whatever was there removed first, a symlink too,
   * never followed), for a writer that creates each file once; close(false) removes it again.
   */
  async freshDirectory(relative: string): Promise<FreshDirectory> {
    const names = relativeNames(relative, this.field, this.key);
    const name = names.pop();
    if (name === undefined) throw new PathError(`${this.field}: a fresh directory needs a name inside ${this.key}`, this.field, "invalid");
    // Held open by the fresh directory itself: the caller may close this one meanwhile.
    const parent = await this.directory(names.join("/") || ".", { create: true });
    try {
      await parent.remove(name);
      const directory = await parent.directory(name, { create: true });
      return {
        path: directory.path,
        createFile: (file, options) => directory.createFile(file, options),
        async close(keep) {
          await directory.close();
          if (!keep) await parent.remove(name);
          await parent.close();
        },
      };
    } catch (error) {
      await parent.close();
      throw error;
    }
  }

  /** What this directory holds, as it lists it (symlinks as symlinks). */
  async entries(): Promise<DirectoryEntry[]> {
    const listed = await readdir(this.entry("."), { withFileTypes: true }).catch((error: unknown) => {
      throw failed(this.place(this.relativePath || "."), "listed", error);
    });
    return listed.map((dirent) => ({
      name: dirent.name,
      kind: dirent.isSymbolicLink() ? "symlink" : dirent.isDirectory() ? "directory" : dirent.isFile() ? "file" : "other",
    }));
  }

  /** What is at `relative` (undefined when nothing is), without following a symlink there. */
  async kind(relative: string): Promise<EntryKind | undefined> {
    try {
      return await this.inParent(relative, false, async (parent, name) => {
        const info = await lstat(parent.entry(name)).catch(() => undefined);
        return info === undefined ? undefined : kindOf(info);
      });
    } catch (error) {
      if (error instanceof PathError && error.code === "missing") return undefined;
      throw error;
    }
  }

  /** Removes what is at `relative` and everything below it; a symlink is removed, never followed. Nothing there is no error. */
  async remove(relative: string): Promise<void> {
    try {
      await this.inParent(relative, false, (parent, name) => parent.removeHere(name));
    } catch (error) {
      if (error instanceof PathError && error.code === "missing") return;
      throw error;
    }
  }

  /** Renames the entry `from` of this directory to `to`, both names in this directory. */
  async rename(from: string, to: string): Promise<void> {
    const [source, target] = [this.singleName(from), this.singleName(to)];
    await rename(this.entry(source), this.entry(target)).catch((error: unknown) => {
      throw (error as NodeJS.ErrnoException).code === "ENOENT"
        ? missing(this.place(this.shown(source)))
        : failed(this.place(this.shown(to)), "renamed", error);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }

  // ---- one name inside this directory ------------------------------------------------------

  /** The path that names `name` in this very directory (descriptor-paths.ts). */
  private entry(name: string): string {
    if (this.closed) throw new Error(`${this.key}/${this.relativePath} was used after it was closed`);
    return entryPath(this.handle.fd, this.path, name);
  }

  private shown(relative: string): string {
    return [this.relativePath, relative].filter(Boolean).join("/");
  }

  private place(shown: string): PathPlace {
    return { field: this.field, key: this.key, shown };
  }

  private singleName(name: string): string {
    const names = relativeNames(name, this.field, this.key);
    if (names.length !== 1)
      throw new PathError(`${this.field} "${name}" must be one name inside ${this.shown("") || this.key}`, this.field, "invalid");
    return names[0]!;
  }

  /** Walks `names` below this directory, one open directory at a time; `requested` is what a missing path is reported as. */
  private async walk(names: readonly string[], create: boolean, requested: string): Promise<RootDirectory> {
    let current: RootDirectory = this;
    try {
      for (const name of names) {
        const next = await current.child(name, create, requested);
        if (current !== this) await current.close();
        current = next;
      }
      return current;
    } catch (error) {
      if (current !== this) await current.close();
      throw error;
    }
  }

  /** Runs `use` on the last name of `relative` in its parent directory (walked to, and made when `create`). */
  private async inParent<T>(
    relative: string,
    create: boolean,
    use: (parent: RootDirectory, name: string, requested: string) => Promise<T>,
  ): Promise<T> {
    const names = relativeNames(relative, this.field, this.key);
    const requested = this.shown(names.join("/"));
    const name = names.pop();
    if (name === undefined) throw notRegular(this.place(requested || "."));
    const parent = names.length === 0 ? this : await this.walk(names, create, requested);
    try {
      return await use(parent, name, requested);
    } finally {
      if (parent !== this) await parent.close();
    }
  }

  private async child(name: string, create: boolean, requested: string): Promise<RootDirectory> {
    const target = this.entry(name);
    const place = this.place(this.shown(name === "." ? "" : name) || ".");
    if (create) {
      await mkdir(target).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw failed(place, "created", error);
      });
    }
    const seen = await this.lstatForFallback(target);
    const handle = await open(target, DIRECTORY).catch(async (error: unknown) => {
      throw await this.refusal(name, error, "directory", requested);
    });
    try {
      await this.sameAsSeen(handle, seen, place);
    } catch (error) {
      await handle.close();
      throw error;
    }
    const relativePath = name === "." ? this.relativePath : this.shown(name);
    return new RootDirectory(handle, name === "." ? this.path : path.join(this.path, name), relativePath, this.key, this.field);
  }

  private async openFileHere(name: string, requested: string): Promise<OpenedFile> {
    const place = this.place(this.shown(name));
    const seen = await this.lstatForFallback(this.entry(name));
    const handle = await open(this.entry(name), READ).catch(async (error: unknown) => {
      throw await this.refusal(name, error, "file", requested);
    });
    try {
      await this.sameAsSeen(handle, seen, place);
      const info = await handle.stat();
      if (!info.isFile()) throw notRegular(place);
      return { handle, size: info.size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  private async openAppendHere(name: string, requested: string): Promise<FileHandle> {
    const place = this.place(this.shown(name));
    const seen = await this.lstatForFallback(this.entry(name));
    const handle = await open(this.entry(name), APPEND, 0o666).catch(async (error: unknown) => {
      throw await this.refusal(name, error, "file", requested);
    });
    try {
      await this.sameAsSeen(handle, seen, place);
      const info = await handle.stat();
      if (!info.isFile()) throw notRegular(place);
      // A hard link planted to a file elsewhere would be appended to through this name.
      if (info.nlink > 1) throw hardLinked(place);
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  private async replaceHere(name: string, data: string | Uint8Array, mode: number): Promise<void> {
    const place = this.place(this.shown(name));
    const present = await lstat(this.entry(name)).catch(() => undefined);
    // rename() would replace a symlink, not write through it; it is refused all the same, so that a planted one is seen.
    if (present?.isSymbolicLink()) throw symlinkRefused(place);
    if (present !== undefined && !present.isFile()) throw notRegular(place);
    const temporary = `.${randomBytes(8).toString("hex")}.tmp`;
    let handle: FileHandle | undefined;
    try {
      handle = await open(this.entry(temporary), CREATE, mode);
      await handle.writeFile(data);
      await handle.close();
      handle = undefined;
      await rename(this.entry(temporary), this.entry(name));
    } catch (error) {
      await handle?.close().catch(() => {});
      await unlink(this.entry(temporary)).catch(() => {});
      throw error instanceof PathError ? error : writeFailed(place, error);
    }
  }

  private async removeHere(name: string): Promise<void> {
    const info = await lstat(this.entry(name)).catch(() => undefined);
    if (info === undefined) return;
    if (!info.isDirectory()) {
      await unlink(this.entry(name)).catch(ignoreMissing);
      return;
    }
    let directory: RootDirectory;
    try {
      directory = await this.child(name, false, this.shown(name));
    } catch (error) {
      // Swapped for something else since the lstat: that is removed instead.
      if (error instanceof PathError && error.code === "invalid") return unlink(this.entry(name)).catch(ignoreMissing);
      throw error;
    }
    try {
      for (const entry of await directory.entries()) await directory.removeHere(entry.name);
    } finally {
      await directory.close();
    }
    await rmdir(this.entry(name)).catch(ignoreMissing);
  }

  /** Why `name` could not be opened as wanted: what lstat says is there now (never where a symlink points). */
  private async refusal(name: string, error: unknown, wanted: "file" | "directory", requested: string): Promise<PathError> {
    const place = this.place(this.shown(name === "." ? "" : name) || ".");
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return missing(this.place(requested || "."));
    const info = await lstat(this.entry(name)).catch(() => undefined);
    if (info?.isSymbolicLink()) return symlinkRefused(place);
    if (info !== undefined && wanted === "directory" && !info.isDirectory()) return notDirectory(place);
    if (info !== undefined && wanted === "file" && !info.isFile()) return notRegular(place);
    return failed(place, "opened", error);
  }

  /** Without descriptor paths: what is at `target` just before it is opened (compared after, sameAsSeen). */
  private async lstatForFallback(target: string): Promise<Stats | undefined> {
    if (descriptorPathsWork()) return undefined;
    return lstat(target).catch(() => undefined);
  }

  /** The caller closes `handle` when this throws. */
  private async sameAsSeen(handle: FileHandle, seen: Stats | undefined, place: PathPlace): Promise<void> {
    if (descriptorPathsWork() || seen === undefined) return;
    const opened = await handle.stat();
    if (seen.isSymbolicLink() || opened.dev !== seen.dev || opened.ino !== seen.ino) throw symlinkRefused(place);
  }
}

function kindOf(info: Stats): EntryKind {
  return info.isSymbolicLink() ? "symlink" : info.isDirectory() ? "directory" : info.isFile() ? "file" : "other";
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== "ENOENT") throw error;
}

/** A write that failed on the server's side (a full disk, a permission): not the client's path, so not a PathError. */
function writeFailed({ key, shown }: PathPlace, error: unknown): Error {
  return new Error(`cannot write ${shown} under ${key} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
}
