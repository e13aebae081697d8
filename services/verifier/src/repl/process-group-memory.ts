// Resident memory of process groups, from Linux /proc. A worker is a process group
// (`lake env repl` is two processes), so its memory is the sum over the group.
// Finding a group's members means reading every /proc/<pid>/stat (~1 ms), which the
// pool does on a timer; re-reading the known members' VmRSS after each request is
// a few small reads.
import { readdir, readFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";

/** Whether this host has /proc (Linux); without it memory caps cannot be enforced. */
export function procAvailable(): boolean {
  return existsSync("/proc/self/status");
}

export class ProcessGroupMemory {
  private members = new Map<number, number[]>();

  /** Scans /proc for the members of `groups` and returns each group's resident bytes. */
  async scan(groups: readonly number[]): Promise<Map<number, number>> {
    const wanted = new Set(groups);
    const members = new Map<number, number[]>(groups.map((group) => [group, []]));
    const entries = await readdir("/proc").catch(() => [] as string[]);
    await Promise.all(
      entries.map(async (entry) => {
        if (!/^\d+$/.test(entry)) return;
        const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => undefined);
        const group = stat === undefined ? undefined : processGroupOf(stat);
        if (group !== undefined && wanted.has(group)) members.get(group)!.push(Number(entry));
      }),
    );
    this.members = members;
    return new Map(groups.map((group) => [group, this.residentBytes(group)]));
  }

  /** Resident bytes of the group's members as of the last scan (the leader alone before any scan). */
  residentBytes(group: number): number {
    const pids = this.members.get(group) ?? [group];
    let total = 0;
    for (const pid of pids) total += residentBytesOf(pid);
    return total;
  }
}

/** The process group of a /proc/<pid>/stat line: the 3rd field after the parenthesised command name. */
export function processGroupOf(stat: string): number | undefined {
  // The command name may itself contain spaces and parentheses: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const group = Number(fields[2]);
  return Number.isInteger(group) ? group : undefined;
}

/** VmRSS of one process in bytes; 0 when it is gone or has no user memory (a zombie). */
export function residentBytesOf(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return 0;
  }
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}
