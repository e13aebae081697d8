import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { ProcessGroupMemory, processGroupOf, procAvailable, residentBytesOf } from "./process-group-memory.js";

describe("processGroupOf", () => {
  it("reads the group after a command name that has spaces and parentheses", () => {
    expect(processGroupOf("1234 (lake (env) x) S 1 4321 4321 0 -1")).toBe(4321);
    expect(processGroupOf("77 (repl) R 76 70 70 0")).toBe(70);
  });
});

describe.runIf(procAvailable())("on Linux /proc", () => {
  it("reads this process's group and resident memory", async () => {
    const group = processGroupOf(readFileSync("/proc/self/stat", "utf8"))!;
    expect(group).toBeGreaterThan(0);
    expect(residentBytesOf(process.pid)).toBeGreaterThan(10 * 1024 * 1024);
    const memory = new ProcessGroupMemory();
    const scanned = await memory.scan([group]);
    expect(scanned.get(group)).toBeGreaterThanOrEqual(residentBytesOf(process.pid));
    expect(memory.residentBytes(group)).toBeGreaterThan(0);
  });

  it("reads 0 for a process that does not exist", () => {
    expect(residentBytesOf(2 ** 22 + 12345)).toBe(0);
  });
});
