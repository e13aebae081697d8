// bench/rpc/profile.ts: where one unary call's server time goes, for the kit and for a
// plain grpc-js server with the same handler. Each server runs under V8's CPU profiler
// while the grpc-js load process keeps CONCURRENCY calls in flight; the samples of the
// server's own work (not its start-up, not idle) are sorted by where the running code
// lives, and printed as microseconds per call beside the plain server's.
// Prints JSON. Usage: npx tsx bench/rpc/profile.ts [seconds] [concurrency]
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { LoadResult } from "../support/load-result.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const seconds = Number(process.argv[2] ?? 8);
const concurrency = Number(process.argv[3] ?? 64);

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** Where code lives, by its script URL: the rows of the breakdown. */
const PLACES: [string, (url: string, fn: string) => boolean][] = [
  ["garbage collection", (_u, fn) => fn === "(garbage collector)"],
  ["the handler (Tokenize)", (u) => u.includes("/bench/rpc/tokenize-handler")],
  ["the kit: admission, service pipeline, adapters, listener", (u) => u.includes("/packages/kit/")],
  ["@grpc/grpc-js", (u) => u.includes("@grpc/grpc-js")],
  ["connect-node and connect", (u) => u.includes("@connectrpc/")],
  ["protobuf encoding (@bufbuild/protobuf)", (u) => u.includes("@bufbuild/protobuf")],
  ["OpenTelemetry", (u) => u.includes("@opentelemetry/")],
  ["Node: HTTP/2, streams, sockets", (u) => /node:internal\/(http2|streams|stream_base_commons)|node:net|node:stream/.test(u)],
  ["Node: events, timers, promises, abort signals", (u) => u.startsWith("node:")],
];
const OTHER = "native and other";

function node(script: string, args: string[], extra: string[] = []): ChildProcess {
  return spawn(process.execPath, [...extra, "--import", "tsx", `${here}${script}`, ...args], {
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

/** Self time in ms by place, over the samples that are neither idle nor module loading. */
function breakdown(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const loading = (id: number): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { url } = byId.get(at)!.callFrame;
      if (url.startsWith("node:internal/modules") || url.includes("/tsx/dist/")) return true;
    }
    return false;
  };
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const { functionName, url } = byId.get(id)!.callFrame;
    if (functionName === "(idle)" || loading(id)) return;
    const place = PLACES.find(([, matches]) => matches(url, functionName))?.[0] ?? OTHER;
    out.set(place, (out.get(place) ?? 0) + profile.timeDeltas[i]! / 1000);
  });
  return out;
}

async function profileServer(script: string) {
  const dir = mkdtempSync(path.join(tmpdir(), "rpc-profile-"));
  try {
    const server = node(script, [], ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
    const port = await firstLine(server);
    const load = node("load.ts", [`127.0.0.1:${port}`, String(concurrency), String(seconds), "1"]);
    const result = JSON.parse(await firstLine(load)) as LoadResult;
    await once(load, "exit");
    // The servers exit cleanly on SIGINT, which writes the profile.
    server.kill("SIGINT");
    await once(server, "exit");
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"))!;
    const places = breakdown(JSON.parse(readFileSync(path.join(dir, file), "utf8")) as CpuProfile);
    // Samples cover the warm-up second too: per call over every call of both phases.
    const calls = result.calls * ((seconds + 1) / seconds);
    const perCall = Object.fromEntries(
      [...PLACES.map(([name]) => name), OTHER].map((name) => [name, Number((((places.get(name) ?? 0) * 1000) / calls).toFixed(1))]),
    );
    const total = Number(
      Object.values(perCall)
        .reduce((a, b) => a + b, 0)
        .toFixed(1),
    );
    return { callsPerSecond: Math.round(result.callsPerSecond), microsecondsPerCall: { ...perCall, total } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const loadAverageAtStart = loadavg().map((l) => Number(l.toFixed(2)));
const kit = await profileServer("kit-server.ts");
const grpcJs = await profileServer("grpc-js-server.ts");
console.log(
  JSON.stringify(
    {
      benchmark: "rpc-profile",
      method: "leangrpo.v1.InferenceService/Tokenize (unary, gRPC over h2c, loopback)",
      concurrency,
      seconds,
      note: "server CPU time per call by where the running code lives (self time), start-up and idle excluded",
      loadAverage: { start: loadAverageAtStart, end: loadavg().map((l) => Number(l.toFixed(2))) },
      kit,
      grpcJs,
    },
    null,
    2,
  ),
);
