// A process's CPU time so far (user + system, its threads included, its children not), ms; Linux.
import { readFileSync } from "node:fs";

export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime, in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
