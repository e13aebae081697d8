// `lean-grpo` takes its servers with it however it was started: `kill <pid>` of the
// outermost process of a background `npx lean-grpo serve all` (npm, which runs the bin under
// `sh -c` and signals only that shell) frees every port within the drain time; SIGHUP to
// the bin run directly does the same.
import { describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { createInterface } from "node:readline";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";

const SERVICES = ["inference", "verifier", "reward", "learner", "orchestrator"];
const DRAIN_MS = 500;
/** The drain, plus the 200 ms poll of the parent and the servers' close. */
const FREED_WITHIN_MS = DRAIN_MS + 2500;
const OVERRIDES = SERVICES.flatMap((s) => [`${s}.server.port=0`, `${s}.server.shutdown.drain_delay_ms=${DRAIN_MS}`]);

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function servingPorts(child: ChildProcess): Promise<number[]> {
  const ports: number[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /^(\w+)\s+http:\/\/127\.0\.0\.1:(\d+)\s+SERVING/.exec(line);
    if (match && SERVICES.includes(match[1]!)) ports.push(Number(match[2]));
    if (ports.length === SERVICES.length) return ports;
  }
  throw new Error("the command ended before every service was serving");
}

/** How long until no port accepts a connection; throws after `limitMs`. */
async function freedAfter(ports: number[], limitMs: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    const open = await Promise.all(ports.map(accepts));
    if (!open.includes(true)) return performance.now() - start;
    await new Promise((r) => setTimeout(r, 100));
  }
  const open = await Promise.all(ports.map(accepts));
  throw new Error(`ports still open ${limitMs} ms after the signal: ${ports.filter((_, i) => open[i]).join(", ")}`);
}

async function startedAndStopped(command: string, args: string[], signal: NodeJS.Signals) {
  // Its own process group, so that only the PID we signal gets the signal (as with `&` in a script).
  const child = spawn(command, args, {
    cwd: repoRoot,
    detached: true,
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  try {
    const ports = await servingPorts(child);
    expect(await Promise.all(ports.map(accepts))).toEqual(ports.map(() => true));
    process.kill(child.pid!, signal);
    return await freedAfter(ports, FREED_WITHIN_MS);
  } finally {
    // Whatever happened, nothing of the test outlives it.
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
}

describe("lean-grpo stops with its servers", () => {
  it("frees every port when the outermost PID of `npx lean-grpo serve all` gets SIGTERM", async () => {
    const ms = await startedAndStopped("npx", ["lean-grpo", "serve", "all", ...OVERRIDES], "SIGTERM");
    expect(ms).toBeLessThan(FREED_WITHIN_MS);
  }, 90_000);

  it("frees every port when the bin run directly gets SIGHUP", async () => {
    const ms = await startedAndStopped(
      process.execPath,
      [`${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`, "serve", "all", ...OVERRIDES],
      "SIGHUP",
    );
    expect(ms).toBeLessThan(FREED_WITHIN_MS);
  }, 90_000);
});
