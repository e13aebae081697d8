// bench/rpc: unary throughput and latency on loopback, kit server vs a plain
// @grpc/grpc-js server with the same handler, measured in the same run by the same
// grpc-js load process. The two servers run side by side and are measured in alternating
// turns (the order flips every round), so on a shared machine neither gets the quieter
// half. Prints JSON. Usage: npm run bench:rpc [-- seconds-per-turn [rounds]]
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
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
  let buffer = "";
  for await (const chunk of child.stdout!) {
    buffer += chunk;
    const newline = buffer.indexOf("\n");
    if (newline >= 0) return buffer.slice(0, newline).trim();
  }
  throw new Error("process exited before printing a line");
}

interface Server {
  name: "kit" | "grpcJs";
  script: string;
  child?: ChildProcess;
  port?: string;
}

async function load(port: string, concurrency: number): Promise<LoadResult> {
  const child = node("load.ts", [`127.0.0.1:${port}`, String(concurrency), String(seconds), "1"]);
  const result = JSON.parse(await firstLine(child)) as LoadResult;
  await once(child, "exit");
  return result;
}

const servers: Server[] = [
  { name: "grpcJs", script: "grpc-js-server.ts" },
  { name: "kit", script: "kit-server.ts" },
];
const turns: { round: number; concurrency: number; order: string[] }[] = [];
const results = new Map<string, LoadResult[]>();
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
        results.set(key, [...(results.get(key) ?? []), await load(server.port!, concurrency)]);
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
function combined(name: string, concurrency: number): LoadResult & { turns: number } {
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
      goal: "the kit (connect-node behind its request gate) beside a plain grpc-js server: the ratio is the cost of serving gRPC, gRPC-Web and Connect on one port",
      rows,
      turns,
    },
    null,
    2,
  ),
);
