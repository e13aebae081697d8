// The process's open-file limit, for a default connection cap that fits under it.
import { readFileSync } from "node:fs";

/** The soft limit on open files (Linux /proc), or undefined where it cannot be read. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    const value = Number(soft);
    return Number.isFinite(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `server.limits.connections.max` when the config leaves it unset: 1024, or an eighth of
 * the open-file limit where that is lower, so that several servers in one process, their
 * clients, files and worker pipes still fit.
 */
export function defaultConnectionCap(limit = openFileLimit()): number {
  return limit === undefined ? 1024 : Math.max(16, Math.min(1024, Math.floor(limit / 8)));
}
