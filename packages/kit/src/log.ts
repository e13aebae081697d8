// pino JSON logs; LOG_LEVEL picks the level (default info, "silent" in tests).
//
// Where they go is decided per process, not per logger: a service run on its own logs to
// stderr (a collector reads it), while `lean-grpo train` keeps the terminal for people and
// sends each service's lines to `<dir>/<service>.log` (configureLogDestination). Loggers are
// created at module load, before any command has parsed its flags, so each one writes through
// a router that looks at the destination when a line is written. The destination also lives
// in the environment (LEANGRPO_LOG_DIR, LEANGRPO_LOG_STDERR) so that worker threads and child
// processes started afterwards log to the same place.
//
// The directory is opened once per process and held, where it has a root (a run's logs under
// runs_dir) by the kit's walk from that root, so that no process follows a symlink planted
// below it meanwhile; each file is opened inside it with O_NOFOLLOW (descriptor-paths.ts), and
// must be a regular file with no other hard link: a symlink or link planted where a log file
// goes is never appended through (that logger's lines go to stderr instead, with one line
// saying why).
import { closeSync, constants, fstatSync, mkdirSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { pino, type Logger } from "pino";
import { entryPath } from "./paths/descriptor-paths.js";
import { openDirectorySync } from "./paths/directory-sync.js";

export interface LogDestination {
  /** Directory for one `<logger name>.log` file per logger name; unset: no files. */
  dir?: string;
  /** A directory `dir` lies under: `dir` is then reached from it without following a symlink. */
  root?: string;
  /** Also (or, without a dir, only) JSON lines on stderr. */
  stderr: boolean;
}

const DIR_VAR = "LEANGRPO_LOG_DIR";
const ROOT_VAR = "LEANGRPO_LOG_ROOT";
const STDERR_VAR = "LEANGRPO_LOG_STDERR";

function fromEnvironment(): LogDestination {
  const dir = process.env[DIR_VAR] || undefined;
  const root = process.env[ROOT_VAR] || undefined;
  // Without a directory, stderr is the only place left: never drop a service's logs.
  return { ...(dir ? { dir } : {}), ...(dir && root ? { root } : {}), stderr: dir === undefined || process.env[STDERR_VAR] === "1" };
}

let destination: LogDestination = fromEnvironment();
const files = new Map<string, number | undefined>();

/** Sends every logger of this process (and of threads and processes started from now on) to `next`. */
export function configureLogDestination(next: LogDestination): void {
  destination = { ...next };
  if (next.dir) process.env[DIR_VAR] = path.resolve(next.dir);
  else delete process.env[DIR_VAR];
  if (next.dir && next.root) process.env[ROOT_VAR] = path.resolve(next.root);
  else delete process.env[ROOT_VAR];
  process.env[STDERR_VAR] = next.stderr ? "1" : "0";
}

export function logDestination(): LogDestination {
  return { ...destination };
}

/** The file a logger named `name` writes to, or undefined when logs do not go to files. */
export function logFile(name: string): string | undefined {
  return destination.dir ? path.join(path.resolve(destination.dir), `${safeName(name)}.log`) : undefined;
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_");
}

const directories = new Map<string, { fd: number; path: string }>();
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The log file's descriptor, opened on its first line; undefined (once said on stderr) when it is refused. */
function fileDescriptor(file: string): number | undefined {
  if (files.has(file)) return files.get(file);
  const dir = path.dirname(file);
  let fd: number | undefined;
  try {
    let directory = directories.get(dir);
    if (directory === undefined) {
      directory = openLogDirectory(dir);
      directories.set(dir, directory);
    }
    fd = openSync(entryPath(directory.fd, directory.path, path.basename(file)), APPEND, 0o666);
    const info = fstatSync(fd);
    if (!info.isFile() || info.nlink > 1) throw new Error("it is not a regular file of its own (a FIFO, device or hard link)");
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    const why = (error as NodeJS.ErrnoException).code === "ELOOP" ? "it is a symlink" : (error as Error).message;
    writeSync(2, `log file ${file} refused (${why}); its lines go to stderr\n`);
  }
  files.set(file, fd);
  return fd;
}

/** The log directory, made if need be: walked from the destination's root where it has one. */
function openLogDirectory(dir: string): { fd: number; path: string } {
  const root = destination.root && path.resolve(destination.root);
  if (root !== undefined) return openDirectorySync(root, "the log root", path.relative(root, dir), "the log folder");
  mkdirSync(dir, { recursive: true });
  return { fd: openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY), path: dir };
}

/** pino's destination for one logger: each line to its file and/or stderr, wherever the process says now. */
function routedStream(name: string): { write(line: string): void } {
  return {
    write(line: string) {
      const file = logFile(name);
      const fd = file === undefined ? undefined : fileDescriptor(file);
      // Synchronous: a line written just before the process exits (a fatal error) is kept.
      if (fd !== undefined) writeSync(fd, line);
      if (destination.stderr || (file !== undefined && fd === undefined)) writeSync(2, line);
    },
  };
}

export function createLogger(name: string): Logger {
  return pino({ name, level: process.env.LOG_LEVEL ?? (process.env.VITEST ? "silent" : "info") }, routedStream(name));
}
