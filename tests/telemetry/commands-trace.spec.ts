// `eval`, `sft` and `serve` honour OTEL_* as `train` does (train-trace.spec.ts): each
// command's spans reach a loopback OTLP sink before its process exits, `serve` on SIGTERM;
// so do a service's own process (services/<name>/src/server.ts, what its image runs).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { repoRoot } from "../support/interop-verifier.js";
import { startServiceProcess } from "../support/service-process.js";
import { startOtlpSink, type OtlpSink } from "../support/otlp-sink.js";

const CLI = `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`;
let dir: string;
let sink: OtlpSink;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "commands-trace-"));
  sink = await startOtlpSink();
});
afterAll(async () => {
  await sink?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ ...process.env, LOG_LEVEL: "warn", OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint });
const named = (name: string) => sink.spans.filter((s) => s.name === name);

describe("every command exports its traces", () => {
  it("eval: the command span holds the Generate calls", async () => {
    const data = path.join(dir, "heldout.jsonl");
    writeFileSync(data, ["1+1:2", "2+3:5"].map((l) => JSON.stringify({ problem: l.split(":")[0], answer: l.split(":")[1] })).join("\n"));
    // Run from the data's directory, as a user would: the local mesh reads files under the
    // directory it was started in (its data_root); the model is named by its absolute path.
    await promisify(execFile)(
      process.execPath,
      [CLI, "eval", "heldout.jsonl", "--model", path.join(repoRoot, "models/arith-tiny"), "--max-tokens", "8", "--json"],
      { cwd: dir, env: env() },
    );
    const [command] = named("lean-grpo eval");
    expect(command).toBeDefined();
    const generates = named("leangrpo.v1.InferenceService/Generate").filter((s) => s.traceId === command!.traceId && s.kind === 3);
    expect(generates.length).toBeGreaterThan(0);
  }, 60_000);

  it("sft: the command span", async () => {
    const data = path.join(dir, "sft.jsonl");
    writeFileSync(data, `${JSON.stringify({ problem: "1+1", answer: "2" })}\n`);
    const out = path.join(dir, "sft-model");
    await promisify(execFile)(
      process.execPath,
      [CLI, "sft", data, "--model", "models/arith-tiny", "--out", out, "--steps", "1", "--batch", "1", "--rank", "2", "--backend", "cpu"],
      { cwd: repoRoot, env: env() },
    );
    expect(named("lean-grpo sft")).toHaveLength(1);
  }, 60_000);

  it("serve: a service's server spans, flushed when SIGTERM stops it", async () => {
    const child = spawn(process.execPath, [CLI, "serve", "reward", "--port", "0", "server.shutdown.drain_delay_ms=0"], {
      cwd: repoRoot,
      env: { ...env(), OTEL_SERVICE_NAME: "reward-under-test" },
      stdio: ["ignore", "pipe", "ignore"],
    });
    let url = "";
    for await (const line of createInterface({ input: child.stdout! })) {
      const [name, address] = line.split(/\s+/);
      if (name === "reward") {
        url = address!;
        break;
      }
    }
    await createClient(RewardService, createGrpcTransport({ baseUrl: url })).listScorers({});
    child.kill("SIGTERM");
    await once(child, "exit");
    const served = named("leangrpo.v1.RewardService/ListScorers");
    expect(served.map((s) => [s.kind, s.service])).toEqual([[2, "reward-under-test"]]);
  }, 60_000);

  it("a service's own process (its server.ts, as its image runs it) flushes its spans on SIGTERM", async () => {
    const verifier = await startServiceProcess("verifier", ["server.shutdown.drain_delay_ms=0"], {
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
    });
    await createClient(LeanVerifierService, createGrpcTransport({ baseUrl: verifier.url })).poolStats({});
    expect(await verifier.stop()).toBe(0);
    const served = named("leangrpo.v1.LeanVerifierService/PoolStats");
    expect(served.map((s) => [s.kind, s.service])).toEqual([[2, "lean-grpo-verifier"]]);
  }, 60_000);
});
