// bench/rpc: unary throughput and latency on loopback, kit server vs a plain
// @grpc/grpc-js server with the same handler, measured in the same run by the same
// grpc-js load process. Prints JSON. Usage: npm run bench:rpc [-- seconds]
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { LoadResult } from "../support/load-result.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const seconds = Number(process.argv[2] ?? process.env.BENCH_SECONDS ?? 5);
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

async function measure(server: string): Promise<LoadResult[]> {
  const child = node(server);
  const port = await firstLine(child);
  const results: LoadResult[] = [];
  try {
    for (const concurrency of concurrencies) {
      const load = node("load.ts", [`127.0.0.1:${port}`, String(concurrency), String(seconds), "1"]);
      results.push(JSON.parse(await firstLine(load)));
      await once(load, "exit");
    }
  } finally {
    child.kill("SIGTERM");
    await once(child, "exit");
  }
  return results;
}

const baseline = await measure("grpc-js-server.ts");
const kit = await measure("kit-server.ts");
const rows = concurrencies.map((concurrency, i) => ({
  concurrency,
  kit: kit[i],
  grpcJs: baseline[i],
  throughputRatio: Number((kit[i]!.callsPerSecond / baseline[i]!.callsPerSecond).toFixed(3)),
}));
console.log(
  JSON.stringify(
    {
      benchmark: "rpc",
      method: "leangrpo.v1.InferenceService/Tokenize (unary, gRPC over h2c, loopback)",
      secondsPerPoint: seconds,
      goal: "kit >= 0.8x grpc-js throughput; p99 <= 2 ms at 64 callers",
      rows,
    },
    null,
    2,
  ),
);
