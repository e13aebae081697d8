// The one synchronous walk: for code that cannot wait (a process's log files, opened on the
// first line it writes). Like RootDirectory.directory, it makes and opens one name at a time
// from the directory already open (descriptor-paths.ts), refusing every symlink below the root.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, realpathSync, type Stats } from "node:fs";
import path from "node:path";
import { descriptorPathsWork, entryPath } from "./descriptor-paths.js";
import { failed, missing, notDirectory, rootMissing, symlinkRefused, type PathPlace } from "./path-error.js";
import { relativeNames } from "./relative-names.js";

const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Makes the directory `given` under the root `dir` (config key `key`) with its parents, no symlink on the way; its path. */
export function makeDirectorySync(dir: string, key: string, given: string, field: string): string {
  const opened = openDirectorySync(dir, key, given, field);
  closeSync(opened.fd);
  return opened.path;
}

/** As makeDirectorySync, and the directory stays open: its descriptor (close it) and its path. */
export function openDirectorySync(dir: string, key: string, given: string, field: string): { fd: number; path: string } {
  const names = relativeNames(given, field, key);
  mkdirSync(dir, { recursive: true });
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    throw rootMissing(field, key);
  }
  let current = realpathSync(dir);
  const shown: string[] = [];
  try {
    for (const name of names) {
      const target = entryPath(fd, current, name);
      shown.push(name);
      const place: PathPlace = { field, key, shown: shown.join("/") };
      try {
        mkdirSync(target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw failed(place, "created", error);
      }
      const seen: Stats | undefined = descriptorPathsWork() ? undefined : lstatSync(target, { throwIfNoEntry: false });
      let next: number;
      try {
        next = openSync(target, DIRECTORY);
      } catch (error) {
        const info = lstatSync(target, { throwIfNoEntry: false });
        if (info === undefined) throw missing(place);
        throw info.isSymbolicLink() ? symlinkRefused(place) : info.isDirectory() ? failed(place, "opened", error) : notDirectory(place);
      }
      closeSync(fd);
      fd = next;
      if (seen !== undefined) {
        const opened = fstatSync(fd);
        if (seen.isSymbolicLink() || opened.dev !== seen.dev || opened.ino !== seen.ino) throw symlinkRefused(place);
      }
      current = path.join(current, name);
    }
    return { fd, path: current };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
