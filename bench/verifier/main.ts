// bench/verifier: the verifier service through gRPC, with the REPL stand-in
// (tests/fakes/lean-repl) as its REPL, against baselines measured in the same run:
//  1. overhead per Verify above the REPL's own time: Verify p50 at one caller and
//     one worker, minus the p50 of the same two REPL round trips made directly over a
//     pipe (goal: <= 1 ms);
//  2. throughput at pool sizes 1, 2, 4, 8 with the stand-in answering at once, against
//     the ideal: linear in the pool size until the cores are busy;
//  3. the same with a stand-in that takes a fixed time per answer (sleeping, as a
//     worker waits on Lean), where the ideal stays linear past the core count.
// The server runs as its own process (services/verifier/src/server.ts, sandbox and
// all), the load (a @grpc/grpc-js client) as another. Prints JSON. Usage: npx tsx bench/verifier/main.ts [SECONDS]
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createServiceClient } from "@lean-grpo/kit";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { benchRules } from "./bench-request.js";
import { measureReplBaseline } from "./repl-baseline.js";
import type { LoadResult } from "../support/load-result.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const seconds = Number(process.argv[2] ?? process.env.BENCH_SECONDS ?? 3);
const cores = availableParallelism();
const poolSizes = [1, 2, 4, 8];
const delayMs = 20;

interface VerifierLoadResult extends LoadResult {
  serviceTotalP50Ms: number;
  serviceOwnP50Ms: number;
}

const dir = mkdtempSync(join(tmpdir(), "bench-verifier-"));
const rulesFile = (name: string, delay: number) => {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(benchRules(delay)));
  return file;
};
const immediate = rulesFile("immediate.json", 0);
const delayed = rulesFile("delayed.json", delayMs);
const standIn = (rules: string) => [process.execPath, "--import", "tsx", join(repoRoot, "tests/fakes/lean-repl/main.ts"), "--rules", rules];

function node(script: string, args: string[], stdio: "pipe-stdout" | "pipe-stderr"): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: repoRoot,
    stdio: stdio === "pipe-stdout" ? ["ignore", "pipe", "inherit"] : ["ignore", "ignore", "pipe"],
    env: { ...process.env, LOG_LEVEL: "info", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
  });
}

/** Starts services/verifier/src/server.ts with `poolSize` workers of the stand-in; resolves with its URL once they are up. */
async function startServer(poolSize: number, rules: string): Promise<{ url: string; child: ChildProcess }> {
  const child = node(
    join(repoRoot, "services/verifier/src/server.ts"),
    [
      "--port",
      "0",
      `repl.command=${JSON.stringify(standIn(rules))}`,
      `repl.cwd=${JSON.stringify(repoRoot)}`,
      `repl.pool_size=${poolSize}`,
      "repl.queue_capacity=4096",
      "repl.memory_limit_mb=0",
      "repl.sandbox.mode=none",
      "repl.max_requests_per_worker=0",
      // The REPL pool's throughput is measured here; the replay tier is measured on its own (README, "The verdict").
      "repl.replay=off",
      "server.limits.max_concurrent_calls=0",
      "server.shutdown.drain_delay_ms=0",
    ],
    "pipe-stderr",
  );
  let url: string | undefined;
  for await (const line of createInterface({ input: child.stderr! })) {
    const record = JSON.parse(line) as { msg?: string; url?: string; level?: number };
    if (record.msg === "serving") {
      url = record.url;
      break;
    }
  }
  if (!url) throw new Error("the verifier exited before serving");
  child.stderr!.resume();
  const { client, transport } = createServiceClient(LeanVerifierService, { endpoints: [url] });
  for (;;) {
    const stats = await client.poolStats({});
    if (stats.workerStats.every((worker) => worker.pid !== 0 && worker.state === "idle")) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  transport.close();
  return { url, child };
}

async function measure(poolSize: number, rules: string, concurrency: number): Promise<VerifierLoadResult> {
  const server = await startServer(poolSize, rules);
  try {
    const load = node(join(here, "load.ts"), [server.url, String(concurrency), String(seconds), "1"], "pipe-stdout");
    let output = "";
    for await (const chunk of load.stdout!) output += chunk;
    return JSON.parse(output) as VerifierLoadResult;
  } finally {
    server.child.kill("SIGTERM");
    await once(server.child, "exit");
  }
}

function scaling(rows: VerifierLoadResult[], ideal: (poolSize: number, one: number) => number) {
  const one = rows[0]!.callsPerSecond;
  return rows.map((row, i) => {
    const poolSize = poolSizes[i]!;
    const idealCallsPerSecond = ideal(poolSize, one);
    return {
      poolSize,
      concurrency: row.concurrency,
      callsPerSecond: round(row.callsPerSecond),
      idealCallsPerSecond: round(idealCallsPerSecond),
      ratioToIdeal: round(row.callsPerSecond / idealCallsPerSecond, 3),
      p50Ms: round(row.p50Ms, 3),
      p99Ms: round(row.p99Ms, 3),
      errors: row.errors,
    };
  });
}

function round(value: number, digits = 1): number {
  return Number(value.toFixed(digits));
}

try {
  const baseline = await measureReplBaseline(standIn(immediate), repoRoot, seconds);
  const single = await measure(1, immediate, 1);
  const immediateRows: VerifierLoadResult[] = [];
  for (const poolSize of poolSizes) immediateRows.push(await measure(poolSize, immediate, 2 * poolSize));
  const delayedRows: VerifierLoadResult[] = [];
  for (const poolSize of poolSizes) delayedRows.push(await measure(poolSize, delayed, 2 * poolSize));
  console.log(
    JSON.stringify(
      {
        benchmark: "verifier",
        method: "leangrpo.v1.LeanVerifierService/Verify (gRPC over h2c, loopback), REPL stand-in as the REPL",
        cores,
        secondsPerPoint: seconds,
        overhead: {
          goalP50Ms: 1,
          replRoundTripsP50Ms: round(baseline.p50Ms, 3),
          replRoundTripsP99Ms: round(baseline.p99Ms, 3),
          verifyP50Ms: round(single.p50Ms, 3),
          verifyP99Ms: round(single.p99Ms, 3),
          overheadP50Ms: round(single.p50Ms - baseline.p50Ms, 3),
          // Of that, inside the service (the rest is gRPC, HTTP/2 and the client):
          serviceTotalP50Ms: round(single.serviceTotalP50Ms, 3),
          serviceOwnP50Ms: round(single.serviceOwnP50Ms, 3),
          calls: single.calls,
        },
        // The stand-in answers at once: the service and the REPL processes share the cores.
        throughputReplAnswersAtOnce: scaling(immediateRows, (poolSize, one) => one * Math.min(poolSize, cores)),
        // Each answer takes delayMs (two per Verify); waiting workers use no core.
        throughputReplTakes20msPerAnswer: scaling(delayedRows, (poolSize, one) => one * poolSize),
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
