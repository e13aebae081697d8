// Node has no openat(2). On Linux, /proc/self/fd/<fd> is the directory that descriptor has
// open, whatever became of its path since: the kernel jumps to the open directory itself and
// never re-reads the path it was opened by. So `/proc/self/fd/<fd>/<name>` resolves exactly
// one name inside exactly that directory, as openat(fd, name) does, and with O_NOFOLLOW (or
// lstat, mkdir, rename, unlink, which never follow the last name) that name is not followed
// either. A walk that opens one name at a time this way cannot be led out of its root by a
// symlink planted or swapped in at any moment: there is no check followed by a separate use.
//
// Where /proc is not mounted (other systems, odd containers), names resolve against the
// directory's path, and each open is compared (device and inode) with an lstat taken just
// before it: a swap of that one name is caught, but a swap of a directory above it between
// the two calls is not. That weaker mode is for development machines; Linux hosts, where the
// services run, always take the first.
import { closeSync, constants, fstatSync, openSync, statSync } from "node:fs";
import path from "node:path";

let usable: boolean | undefined;

/** Whether /proc/self/fd/<fd> names the open directory itself here (checked once per process). */
export function descriptorPathsWork(): boolean {
  if (usable === undefined) {
    try {
      const fd = openSync("/", constants.O_RDONLY | constants.O_DIRECTORY);
      try {
        const opened = fstatSync(fd);
        const named = statSync(`/proc/self/fd/${fd}`);
        usable = opened.dev === named.dev && opened.ino === named.ino;
      } finally {
        closeSync(fd);
      }
    } catch {
      usable = false;
    }
  }
  return usable;
}

/** Tests only: run the fallback (false) or the descriptor paths (true, where they work). */
export function useDescriptorPaths(use: boolean): void {
  usable = use ? undefined : false;
  if (use) descriptorPathsWork();
}

/** The path of `name` inside the directory open as `fd`, which was at `directory` when it was opened. */
export function entryPath(fd: number, directory: string, name: string): string {
  return descriptorPathsWork() ? `/proc/self/fd/${fd}/${name}` : path.join(directory, name);
}
