// `lean-grpo train` with OTEL_EXPORTER_OTLP_ENDPOINT set, as a user runs it, exports its
// spans to a loopback OTLP/HTTP sink standing in for the collector: one trace per step
// from the orchestrator's rollout.step down to the learner's TrainStep, which runs in
// the learner's own thread (its own tracer provider, joined by the W3C traceparent),
// all delivered before the process exits.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../support/interop-verifier.js";
import { startOtlpSink, type OtlpSink, type SinkSpan } from "../support/otlp-sink.js";

const SERVER = 2;
const CLIENT = 3;
let sink: OtlpSink;
let runsDir: string;

beforeAll(async () => {
  sink = await startOtlpSink();
  runsDir = mkdtempSync(path.join(tmpdir(), "lean-grpo-trace-"));
  await promisify(execFile)(
    process.execPath,
    [
      `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`,
      "train",
      "examples/arith.jsonl",
      "--config",
      "configs/train/arith.yaml",
      "training.steps=2",
      "training.batch_size=2",
      "training.num_generations=2",
      "eval.data=",
      `runs_dir=${runsDir}`,
    ],
    { cwd: repoRoot, env: { ...process.env, LOG_LEVEL: "warn", OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint } },
  );
}, 120_000);

afterAll(async () => {
  await sink?.close();
  rmSync(runsDir, { recursive: true, force: true });
});

/** The span named `name` (and of `kind`) among `spans` whose parent is `parent`. */
function childOf(spans: readonly SinkSpan[], parent: SinkSpan, name: string, kind?: number): SinkSpan {
  const found = spans.filter((s) => s.parentSpanId === parent.spanId && s.name === name && (kind === undefined || s.kind === kind));
  expect(found, `${name} under ${parent.name}`).toHaveLength(1);
  return found[0]!;
}

describe("lean-grpo train exports its traces", () => {
  it("delivers one trace per step, the learner thread's TrainStep inside it, before the process exits", () => {
    expect(sink.requests.every((p) => p === "/v1/traces")).toBe(true);
    const steps = sink.spans.filter((s) => s.name === "rollout.step");
    expect(steps.map((s) => s.attributes["leangrpo.step"]).sort()).toEqual([1, 2]);
    expect(new Set(steps.map((s) => s.traceId)).size).toBe(2);

    for (const step of steps) {
      expect(step.parentSpanId).toBe("");
      const trace = sink.spans.filter((s) => s.traceId === step.traceId);
      // Sampling and scoring: the orchestrator's spans, then the RPC's client and server spans.
      const group = trace.find((s) => s.name === "rollout.group" && s.parentSpanId === step.spanId)!;
      expect(group.attributes["leangrpo.run_id"]).toBe(step.attributes["leangrpo.run_id"]);
      const generate = childOf(trace, childOf(trace, group, "rollout.generate"), "leangrpo.v1.InferenceService/Generate", CLIENT);
      childOf(trace, generate, "leangrpo.v1.InferenceService/Generate", SERVER);
      const score = childOf(trace, childOf(trace, group, "rollout.score"), "leangrpo.v1.RewardService/ScoreGroup", CLIENT);
      childOf(trace, score, "leangrpo.v1.RewardService/ScoreGroup", SERVER);

      // Training: the server span comes from the learner's thread, exported by its own provider.
      const learnerStep = childOf(trace, step, "learner.step");
      const trainCall = childOf(trace, learnerStep, "leangrpo.v1.LearnerService/TrainStep", CLIENT);
      const trainServed = childOf(trace, trainCall, "leangrpo.v1.LearnerService/TrainStep", SERVER);
      expect(trainCall.service).toBe("lean-grpo");
      expect(trainServed.service).toBe("lean-grpo-learner");
      expect(trainServed.attributes["rpc.grpc.status_code"]).toBe(0);
      expect(trainServed.startNs).toBeGreaterThanOrEqual(trainCall.startNs);

      // The new adapter reaches the sampler within the same trace.
      const sync = childOf(trace, step, "adapter.sync");
      const load = childOf(trace, sync, "leangrpo.v1.InferenceService/LoadAdapter", CLIENT);
      childOf(trace, load, "leangrpo.v1.InferenceService/LoadAdapter", SERVER);
    }

    // The command's own span holds StartRun; each step links back to the StartRun that began it.
    const command = sink.spans.find((s) => s.name === "lean-grpo train")!;
    expect(command.parentSpanId).toBe("");
    const startRun = childOf(
      sink.spans,
      childOf(sink.spans, command, "leangrpo.v1.OrchestratorService/StartRun", CLIENT),
      "leangrpo.v1.OrchestratorService/StartRun",
      SERVER,
    );
    for (const step of steps) expect(step.links).toContainEqual({ traceId: startRun.traceId, spanId: startRun.spanId });
  });

  it("still delivers the trace when Ctrl-C stops the run after its first step", async () => {
    const stopSink = await startOtlpSink();
    try {
      const child = spawn(
        process.execPath,
        [
          `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`,
          "train",
          "examples/arith.jsonl",
          "--config",
          "configs/train/arith.yaml",
          "training.steps=50",
          "training.batch_size=2",
          "training.num_generations=2",
          "eval.data=",
          `runs_dir=${runsDir}`,
        ],
        {
          cwd: repoRoot,
          env: { ...process.env, LOG_LEVEL: "warn", OTEL_EXPORTER_OTLP_ENDPOINT: stopSink.endpoint },
          stdio: ["ignore", "pipe", "ignore"],
        },
      );
      for await (const line of createInterface({ input: child.stdout! })) {
        if (line.startsWith("{") && JSON.parse(line).step === 1) break;
      }
      child.kill("SIGINT");
      const [code] = await once(child, "exit");
      expect(code).toBe(130);
      // The run stopped at a step boundary: its steps and the command's own span arrived.
      const steps = stopSink.spans.filter((s) => s.name === "rollout.step").map((s) => s.attributes["leangrpo.step"]);
      expect(steps).toContain(1);
      expect(stopSink.spans.some((s) => s.name === "lean-grpo train")).toBe(true);
      expect(stopSink.spans.some((s) => s.name === "leangrpo.v1.OrchestratorService/StopRun")).toBe(true);
    } finally {
      await stopSink.close();
    }
  }, 60_000);
});
