// bench/rpc/services: one real call per service on its stand-in, and the two server streams,
// through the kit's serve() and through a plain @grpc/grpc-js server mounting the same
// service implementations (service-stand-ins.ts; the baseline's adapter has no admission,
// tracing or error mapping: grpc-js-service-handlers.ts):
//   Verify         the verifier, its worker the REPL stand-in (tests/fakes/lean-repl) speaking the REPL's protocol
//   Score          the reward service's math-answer judge on a fraction against a decimal
//   TrainStep      the TypeScript learner on models/arith-tiny, a client stream of 2 groups of 4 samples
//   Generate       the embedded inference service on models/arith-tiny, 4 completions of up to 32 tokens
//   GenerateStream the same request as a server stream (the embedded backend sends each completion whole)
//   WatchRun       the orchestrator replaying a finished run from_start (made first: the smoke config's run)
// As bench/rpc/main.ts: each server in its own process, the load (services-load.ts, one call
// at a time) in another, the two servers measured in alternating turns whose order flips
// every round, each server's CPU time per call from /proc; every figure beside its baseline
// from the same run. A call a server cannot serve is reported as such, with its error.
// Prints JSON. Usage: npm run bench:rpc:services [-- seconds-per-turn [rounds [Call,Call...]]]
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { percentile } from "../support/percentile.js";
import { readRunLines, runTrain } from "../support/train-run.js";
import { benchRules } from "../verifier/bench-request.js";
import { startBenchChild, type BenchChild } from "./bench-child.js";
import { processCpuMs } from "./process-cpu.js";
import { serviceCalls, type CallSetup } from "./service-calls.js";
import type { TurnRequest, TurnResult } from "./services-load.js";
import { REPO_ROOT, type StandInSetup } from "./service-stand-ins.js";

const seconds = Number(process.argv[2] ?? process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.argv[3] ?? process.env.BENCH_ROUNDS ?? 4);
/** Only these calls (by name, comma-separated); all by default. */
const only = (process.argv[4] ?? process.env.BENCH_CALLS)?.split(",");
const callNames = serviceCalls({ runId: "", runSteps: 0 }).map((call) => call.name);
const unknownCalls = only?.filter((name) => !callNames.includes(name)) ?? [];
if (unknownCalls.length > 0) throw new Error(`no call is named ${unknownCalls.join(" or ")}; the calls: ${callNames.join(", ")}`);
/** Calls per turn at least, however long they take. */
const MIN_CALLS = 3;
/** Calls each server makes of each method before the rounds (model loads, first compilations, the REPL's header). */
const WARMUP_CALLS = 2;
const RUN_STEPS = 4;

type ServerName = "kit" | "grpcJs";
interface Server {
  name: ServerName;
  script: string;
  child?: BenchChild;
  target?: string;
}
type Turn = TurnResult & { serverCpuMs: number };

const loadAverageAtStart = loadavg();
const dir = mkdtempSync(join(tmpdir(), "bench-rpc-services-"));
const servers: Server[] = [
  { name: "grpcJs", script: "grpc-js-services-server.ts" },
  { name: "kit", script: "kit-services-server.ts" },
];
let client: BenchChild | undefined;
const results = new Map<string, Turn[]>();
/** Per call and server, why it is not measured (its warm-up calls failed). */
const notServed = new Map<string, string>();
const turns: { round: number; call: string; order: ServerName[] }[] = [];
let calls: ReturnType<typeof serviceCalls> = [];

try {
  const callSetup = await finishedRun(join(dir, "runs"));
  calls = serviceCalls(callSetup).filter((call) => only === undefined || only.includes(call.name));
  const replRules = join(dir, "repl-rules.json");
  writeFileSync(replRules, JSON.stringify(benchRules()));
  for (const server of servers) {
    const setup: StandInSetup = { replRules, runsDir: join(dir, "runs"), scratchDir: join(dir, server.name) };
    server.child = startBenchChild(server.script, [JSON.stringify(setup)]);
  }
  for (const server of servers) server.target = `127.0.0.1:${await server.child!.nextLine()}`;
  client = startBenchChild("services-load.ts", [JSON.stringify(callSetup)], "pipe");

  for (const call of calls) {
    for (const server of servers) {
      const warm = await turn(server, { call: call.name, warmupCalls: WARMUP_CALLS, seconds: 0, minCalls: 0 });
      if (warm.errors > 0) notServed.set(`${server.name}/${call.name}`, warm.firstError ?? "failed");
    }
  }
  for (let round = 0; round < rounds; round++) {
    for (const call of calls) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      turns.push({ round, call: call.name, order: order.map((s) => s.name) });
      for (const server of order) {
        const key = `${server.name}/${call.name}`;
        if (notServed.has(key)) continue;
        results.set(key, [
          ...(results.get(key) ?? []),
          await turn(server, { call: call.name, warmupCalls: 0, seconds, minCalls: MIN_CALLS }),
        ]);
      }
    }
  }
} finally {
  client?.process.stdin?.end();
  await client?.stop();
  for (const server of servers) await server.child?.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** A finished run for WatchRun to replay: `lean-grpo train` with the smoke config, into `runsDir`. */
async function finishedRun(runsDir: string): Promise<CallSetup> {
  const [data, config] = [join(REPO_ROOT, "examples/arith.jsonl"), join(REPO_ROOT, "configs/train/smoke.yaml")];
  const args = [data, "--config", config, "--steps", String(RUN_STEPS), "--output_dir", runsDir];
  const log = join(dir, "train.log");
  const train = await runTrain(args, log, "bench:rpc:services, the run WatchRun replays");
  // The folder goes when the bench ends: the log's end goes into the error.
  if (train.code !== 0) throw new Error(`${train.command} exited with ${train.code}:\n${readFileSync(log, "utf8").slice(-4000)}`);
  const [runId] = readdirSync(runsDir);
  if (runId === undefined) throw new Error(`${train.command} left no run in ${runsDir}`);
  return { runId, runSteps: readRunLines(join(runsDir, runId, "metrics.jsonl")).length };
}

/** One turn of the load client on `server`, with the server's CPU time over its measured calls. */
async function turn(server: Server, request: Omit<TurnRequest, "target">): Promise<Turn> {
  client!.process.stdin!.write(`${JSON.stringify({ ...request, target: server.target })}\n`);
  const announced = await client!.nextLine();
  if (announced !== "measuring") throw new Error(`the load client said ${JSON.stringify(announced)}, expected "measuring"`);
  const before = processCpuMs(server.child!.process.pid!);
  const result = JSON.parse(await client!.nextLine()) as TurnResult;
  return { ...result, serverCpuMs: processCpuMs(server.child!.process.pid!) - before };
}

/** One server's turns of one call: latencies pooled over the turns, throughput over their time. */
function combined(server: ServerName, call: string) {
  const key = `${server}/${call}`;
  const reason = notServed.get(key);
  if (reason !== undefined) return { notServed: reason };
  const all = results.get(key) ?? [];
  const latencies = all.flatMap((t) => t.latenciesMs).sort((a, b) => a - b);
  const elapsedS = all.reduce((sum, t) => sum + t.elapsedMs, 0) / 1000;
  const calls = latencies.length;
  const errors = all.reduce((sum, t) => sum + t.errors, 0);
  const firstMessages = all.flatMap((t) => t.firstMessageMs ?? []).sort((a, b) => a - b);
  return {
    calls,
    errors,
    ...(errors > 0 ? { firstError: all.find((t) => t.firstError !== undefined)?.firstError } : {}),
    callsPerSecond: round(calls / elapsedS, 2),
    p50Ms: round(percentile(latencies, 50), 2),
    p99Ms: round(percentile(latencies, 99), 2),
    serverCpuMsPerCall: round(all.reduce((sum, t) => sum + t.serverCpuMs, 0) / calls, 2),
    ...(firstMessages.length > 0
      ? {
          firstMessageP50Ms: round(percentile(firstMessages, 50), 2),
          messagesPerCall: round(all.reduce((sum, t) => sum + (t.messages ?? 0), 0) / calls, 1),
        }
      : {}),
    turns: all.length,
  };
}

function round(value: number, digits: number): number {
  return Number(value.toFixed(digits));
}

const rows = calls.map((call) => {
  const kit = combined("kit", call.name);
  const grpcJs = combined("grpcJs", call.name);
  const row = { call: call.name, method: `${call.method.parent.typeName}/${call.method.name}`, kind: call.method.methodKind, kit, grpcJs };
  if ("notServed" in kit || "notServed" in grpcJs) return row;
  const kitTurns = results.get(`kit/${call.name}`)!;
  const grpcJsTurns = results.get(`grpcJs/${call.name}`)!;
  return {
    ...row,
    throughputRatio: round(kit.callsPerSecond / grpcJs.callsPerSecond, 3),
    p50Ratio: round(kit.p50Ms / grpcJs.p50Ms, 3),
    p99Ratio: round(kit.p99Ms / grpcJs.p99Ms, 3),
    serverCpuRatio: round(kit.serverCpuMsPerCall / grpcJs.serverCpuMsPerCall, 3),
    // Per round too: how much of the ratio is the machine rather than the server.
    throughputRatioPerRound: kitTurns.map((k, i) => round(k.callsPerSecond / grpcJsTurns[i]!.callsPerSecond, 3)),
  };
});
const failed = rows.some((row) => "notServed" in row.kit || "notServed" in row.grpcJs || row.kit.errors > 0 || row.grpcJs.errors > 0);
console.log(
  JSON.stringify(
    {
      benchmark: "rpc-services",
      description:
        "one real call per service on its stand-in and the two server streams, gRPC over h2c on loopback, one call at a time: the kit's serve() vs a plain grpc-js server mounting the same service implementations",
      secondsPerTurn: seconds,
      minCallsPerTurn: MIN_CALLS,
      rounds,
      loadAverage: { start: loadAverageAtStart.map((l) => round(l, 2)), end: loadavg().map((l) => round(l, 2)) },
      rows,
      turns,
    },
    null,
    2,
  ),
);
if (failed) process.exitCode = 1;
