// A bench script of this folder run as its own process (node with tsx's loader), its stdout
// read line by line: servers print their port, the load client a line per turn.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));

export interface BenchChild {
  process: ChildProcess;
  /** The next line it prints; rejects if it exits first. */
  nextLine(): Promise<string>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

export function startBenchChild(script: string, args: string[], stdin: "pipe" | "ignore" = "ignore"): BenchChild {
  const child = spawn(process.execPath, ["--import", "tsx", `${here}${script}`, ...args], {
    stdio: [stdin, "pipe", "inherit"],
    env: { ...process.env, LOG_LEVEL: "warn", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    process: child,
    async nextLine() {
      const next = await lines.next();
      if (next.done) throw new Error(`${script} exited before printing its next line`);
      return next.value;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
