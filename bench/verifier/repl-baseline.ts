// The REPL's own time for one Verify, the baseline the service's overhead is
// measured against: the two round trips a Verify makes (the proof, then `#print
// axioms`), through a pipe to the same stand-in, by a client that does nothing but
// write JSON and read up to the blank line.
import { spawn } from "node:child_process";
import { benchAxiomsCommand, benchProofCommand } from "./bench-request.js";
import { percentile } from "../support/percentile.js";

export interface BaselineResult {
  pairs: number;
  p50Ms: number;
  p99Ms: number;
}

export async function measureReplBaseline(command: readonly string[], cwd: string, seconds: number): Promise<BaselineResult> {
  const child = spawn(command[0]!, command.slice(1), { cwd, stdio: ["pipe", "pipe", "inherit"] });
  child.stdout.setEncoding("utf8");
  let buffer = "";
  let wake: (() => void) | undefined;
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    wake?.();
  });
  const ask = async (request: unknown): Promise<{ env: number }> => {
    child.stdin.write(`${JSON.stringify(request)}\n\n`);
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const answer = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return JSON.parse(answer) as { env: number };
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  try {
    const header = await ask({ cmd: "import Mathlib" });
    const pair = async () => {
      const proof = await ask(benchProofCommand(header.env));
      await ask(benchAxiomsCommand(proof.env));
    };
    const warmEnd = performance.now() + 1000;
    while (performance.now() < warmEnd) await pair();
    const latencies: number[] = [];
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      const started = performance.now();
      await pair();
      latencies.push(performance.now() - started);
    }
    latencies.sort((a, b) => a - b);
    return { pairs: latencies.length, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
  } finally {
    child.kill("SIGKILL");
  }
}
