// pino JSON logs; LOG_LEVEL picks the level (default info, "silent" in tests).
//
// Where they go is decided per process, not per logger: a service run on its own logs to
// stderr (a collector reads it), while `lean-grpo train` keeps the terminal for people and
// sends each service's lines to `<dir>/<service>.log` (configureLogDestination). Loggers are
// created at module load, before any command has parsed its flags, so each one writes through
// a router that looks at the destination when a line is written. The destination also lives
// in the environment (LEANGRPO_LOG_DIR, LEANGRPO_LOG_STDERR) so that worker threads and child
// processes started afterwards log to the same place.
import { mkdirSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { pino, type Logger } from "pino";

export interface LogDestination {
  /** Directory for one `<logger name>.log` file per logger name; unset: no files. */
  dir?: string;
  /** Also (or, without a dir, only) JSON lines on stderr. */
  stderr: boolean;
}

const DIR_VAR = "LEANGRPO_LOG_DIR";
const STDERR_VAR = "LEANGRPO_LOG_STDERR";

function fromEnvironment(): LogDestination {
  const dir = process.env[DIR_VAR] || undefined;
  // Without a directory, stderr is the only place left: never drop a service's logs.
  return { ...(dir ? { dir } : {}), stderr: dir === undefined || process.env[STDERR_VAR] === "1" };
}

let destination: LogDestination = fromEnvironment();
const files = new Map<string, number>();

/** Sends every logger of this process (and of threads and processes started from now on) to `next`. */
export function configureLogDestination(next: LogDestination): void {
  destination = { ...next };
  if (next.dir) process.env[DIR_VAR] = path.resolve(next.dir);
  else delete process.env[DIR_VAR];
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

function fileDescriptor(file: string): number {
  let fd = files.get(file);
  if (fd === undefined) {
    mkdirSync(path.dirname(file), { recursive: true });
    fd = openSync(file, "a");
    files.set(file, fd);
  }
  return fd;
}

/** pino's destination for one logger: each line to its file and/or stderr, wherever the process says now. */
function routedStream(name: string): { write(line: string): void } {
  return {
    write(line: string) {
      const file = logFile(name);
      // Synchronous: a line written just before the process exits (a fatal error) is kept.
      if (file) writeSync(fileDescriptor(file), line);
      if (destination.stderr) writeSync(2, line);
    },
  };
}

export function createLogger(name: string): Logger {
  return pino({ name, level: process.env.LOG_LEVEL ?? (process.env.VITEST ? "silent" : "info") }, routedStream(name));
}
