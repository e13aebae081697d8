// bench/rpc: unary throughput and latency on loopback, kit server vs a plain
// @grpc/grpc-js server with the same handler, measured in the same run by the same
// grpc-js load process. The two servers run side by side and are measured in alternating
// turns (the order flips every round), so on a shared machine neither gets the quieter
// half. Beside throughput and latency, each server's CPU time per call (from /proc, over
// the turn): the figure another process on the machine disturbs least.
// Prints JSON. Usage: npm run bench:rpc [-- seconds-per-turn [rounds]]
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import type { LoadResult } from "../support/load-result.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const seconds = Number(process.argv[2] ?? process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.argv[3] ?? process.env.BENCH_ROUNDS ?? 2);
const concurrencies = [1, 16, 64];

function node(script: string, args: string[] = []): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", `${here}${script}`, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, LOG_LEVEL: "warn", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
  });
}

async function firstLine(child: ChildProcess): Promise<string> {
  return (await lines(child, 1))[0]!;
}

/** The first `count` lines a child prints, each as soon as it is printed (`onLine`). */
async function lines(child: ChildProcess, count: number, onLine: (line: string) => void = () => {}): Promise<string[]> {
  const out: string[] = [];
  let buffer = "";
  for await (const chunk of child.stdout!) {
    buffer += chunk;
    for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      out.push(line);
      onLine(line);
      if (out.length === count) return out;
    }
  }
  throw new Error("process exited before printing its lines");
}

interface Server {
  name: "kit" | "grpcJs";
  script: string;
  child?: ChildProcess;
  port?: string;
}

/** A process's CPU time so far (user + system), ms; Linux. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime, in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

type Turn = LoadResult & { serverCpuMs: number };

async function load(server: Server, concurrency: number): Promise<Turn> {
  const child = node("load.ts", [`127.0.0.1:${server.port}`, String(concurrency), String(seconds), "1", "announce"]);
  // The server's CPU time over the measured phase only (after the load's warm-up).
  let before = 0;
  const [, report] = await lines(child, 2, (line) => {
    if (line === "measuring") before = cpuMs(server.child!.pid!);
  });
  const serverCpuMs = cpuMs(server.child!.pid!) - before;
  await once(child, "exit");
  return { ...(JSON.parse(report!) as LoadResult), serverCpuMs };
}

const servers: Server[] = [
  { name: "grpcJs", script: "grpc-js-server.ts" },
  { name: "kit", script: "kit-server.ts" },
];
const turns: { round: number; concurrency: number; order: string[] }[] = [];
const results = new Map<string, Turn[]>();
const loadAverageAtStart = loadavg();
try {
  for (const server of servers) {
    server.child = node(server.script);
    server.port = await firstLine(server.child);
  }
  for (let round = 0; round < rounds; round++) {
    for (const concurrency of concurrencies) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      turns.push({ round, concurrency, order: order.map((s) => s.name) });
      for (const server of order) {
        const key = `${server.name}/${concurrency}`;
        results.set(key, [...(results.get(key) ?? []), await load(server, concurrency)]);
      }
    }
  }
} finally {
  for (const server of servers) {
    if (!server.child || server.child.exitCode !== null) continue;
    server.child.kill("SIGTERM");
    await once(server.child, "exit");
  }
}

/** One server's turns at one concurrency: throughput summed over the turns, latency percentiles averaged. */
function combined(name: string, concurrency: number): LoadResult & { turns: number; serverCpuUsPerCall: number } {
  const all = results.get(`${name}/${concurrency}`)!;
  const calls = all.reduce((a, r) => a + r.calls, 0);
  const mean = (f: (r: LoadResult) => number) => Number((all.reduce((a, r) => a + f(r), 0) / all.length).toFixed(3));
  return {
    concurrency,
    calls,
    errors: all.reduce((a, r) => a + r.errors, 0),
    callsPerSecond: Number((calls / (seconds * all.length)).toFixed(1)),
    p50Ms: mean((r) => r.p50Ms),
    p99Ms: mean((r) => r.p99Ms),
    serverCpuUsPerCall: Number(((all.reduce((a, r) => a + r.serverCpuMs, 0) * 1000) / calls).toFixed(1)),
    turns: all.length,
  };
}

const rows = concurrencies.map((concurrency) => {
  const kit = combined("kit", concurrency);
  const grpcJs = combined("grpcJs", concurrency);
  return {
    concurrency,
    kit,
    grpcJs,
    throughputRatio: Number((kit.callsPerSecond / grpcJs.callsPerSecond).toFixed(3)),
    p99Ratio: Number((kit.p99Ms / grpcJs.p99Ms).toFixed(3)),
    serverCpuRatio: Number((kit.serverCpuUsPerCall / grpcJs.serverCpuUsPerCall).toFixed(3)),
    // The ratio per round too: how much of it is the machine rather than the server.
    throughputRatioPerRound: results
      .get(`kit/${concurrency}`)!
      .map((k, i) => Number((k.callsPerSecond / results.get(`grpcJs/${concurrency}`)![i]!.callsPerSecond).toFixed(3))),
  };
});
console.log(
  JSON.stringify(
    {
      benchmark: "rpc",
      method: "leangrpo.v1.InferenceService/Tokenize (unary, gRPC over h2c, loopback)",
      secondsPerTurn: seconds,
      rounds,
      goal: "the kit (grpc-js for gRPC behind the kit's listener, call admission, tracing and error mapping; connect-node for Connect and gRPC-Web on the same port) at >= 0.95x the throughput of a plain grpc-js server, p99 <= 1.1x",
      loadAverage: { start: loadAverageAtStart.map((l) => Number(l.toFixed(2))), end: loadavg().map((l) => Number(l.toFixed(2))) },
      rows,
      turns,
    },
    null,
    2,
  ),
);
