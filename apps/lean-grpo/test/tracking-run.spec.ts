// Tracking never stops or slows a run. A tracker whose server never answers costs nothing per
// step (the stream only queues) and at most the finish timeout at the end, with a warning; one
// that fails is dropped with a warning while the others go on. And a whole `lean-grpo train`
// with W&B unreachable and TensorBoard on ends as the same run without tracking: the same
// curve, step for step.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Command } from "commander";
import { create } from "@bufbuild/protobuf";
import { RunSchema, RunState, StepEventSchema } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RunOutputs, type StepRecord } from "@lean-grpo/orchestrator";
import { registerTrainCommand } from "../src/commands/train-command.js";
import { startTrackers } from "../src/tracking/run-trackers.js";
import { resolveTracking, TrackingSchema } from "../src/tracking/tracking-config.js";
import { repoRoot } from "../../../tests/support/interop-verifier.js";
import { startWandbStandIn } from "./tracking/wandb-stand-in.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tracking-run-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A loopback port with nothing listening (connection refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("tracking and the run", () => {
  it("a tracker that never answers: steps only queue, the end waits at most the finish timeout, with a warning", async () => {
    const server = await startWandbStandIn({ hang: true });
    try {
      const warnings: string[] = [];
      const config = resolveTracking(TrackingSchema.parse({ base_url: server.url, report_to: ["wandb", "tensorboard"] }), true);
      const runDir = path.join(dir, "hang");
      const trackers = startTrackers(config, {
        runId: "hang",
        runDir,
        name: "hang",
        config: {},
        warn: (m) => warnings.push(m),
        env: { WANDB_API_KEY: "k" },
        finishTimeoutMs: 500,
      });
      const t0 = performance.now();
      for (let step = 1; step <= 50; step++) trackers.step(create(StepEventSchema, { step: BigInt(step), metrics: { loss: step } }));
      expect(performance.now() - t0).toBeLessThan(100);
      const t1 = performance.now();
      await trackers.finish(create(RunSchema, { state: RunState.COMPLETED }));
      expect(performance.now() - t1).toBeLessThan(3_000);
      expect(warnings).toEqual([
        expect.stringMatching(/tracking: stopped waiting for W&B \(online\) after 0\.5 s; the run itself is complete/),
      ]);
      // TensorBoard, on its own queue, wrote every step meanwhile.
      expect(readdirSync(path.join(runDir, "tensorboard"))).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("a tracker that fails is dropped with one warning; the others go on", async () => {
    const warnings: string[] = [];
    const config = resolveTracking(TrackingSchema.parse({ base_url: `http://127.0.0.1:${await closedPort()}`, report_to: "all" }), true);
    const runDir = path.join(dir, "refused");
    const trackers = startTrackers(config, {
      runId: "refused",
      runDir,
      name: "refused",
      config: {},
      warn: (m) => warnings.push(m),
      env: { WANDB_API_KEY: "k" },
    });
    for (let step = 1; step <= 3; step++) trackers.step(create(StepEventSchema, { step: BigInt(step), metrics: { loss: step } }));
    await trackers.finish(create(RunSchema, { state: RunState.COMPLETED }));
    expect(warnings).toEqual([
      expect.stringMatching(/^tracking: W&B \(online\) failed and is off for the rest of the run \(the run goes on\): /),
    ]);
    expect(readdirSync(path.join(runDir, "tensorboard"))).toHaveLength(1);
  });

  it("lean-grpo train with W&B unreachable and TensorBoard on ends as the run without tracking", async () => {
    const cwd = process.cwd();
    const key = process.env.WANDB_API_KEY;
    process.chdir(repoRoot);
    process.env.WANDB_API_KEY = "k";
    const train = async (name: string, extra: string[]) => {
      const program = new Command().exitOverride();
      registerTrainCommand(program);
      const runsDir = path.join(dir, name);
      const args = [
        "examples/arith.jsonl",
        "--steps",
        "2",
        "-n",
        "2",
        "training.batch_size=2",
        "training.max_tokens=8",
        "--output_dir",
        runsDir,
        "exp_name=curve",
        ...extra,
      ];
      await program.parseAsync(["train", ...args], { from: "user" });
      const [runId] = readdirSync(runsDir).filter((f) => f.startsWith("curve"));
      return new RunOutputs(path.join(runsDir, runId!));
    };
    try {
      const plain = await train("plain", []);
      const tracked = await train("tracked", [
        `logging.base_url=http://127.0.0.1:${await closedPort()}`,
        "logging.report_to=[wandb, tensorboard]",
      ]);
      for (const outputs of [plain, tracked]) expect((await outputs.readRun()).state).toBe("COMPLETED");
      const curve = (records: StepRecord[]) => records.map((r) => ({ step: r.step, metrics: deterministic(r.metrics) }));
      const [a, b] = [curve(await plain.readSteps()), curve(await tracked.readSteps())];
      expect(a).toHaveLength(2);
      expect(b).toEqual(a);
      expect(existsSync(path.join(tracked.dir, "tensorboard"))).toBe(true);
      expect(existsSync(path.join(plain.dir, "tensorboard"))).toBe(false);
    } finally {
      process.chdir(cwd);
      if (key === undefined) delete process.env.WANDB_API_KEY;
      else process.env.WANDB_API_KEY = key;
      process.exitCode = undefined;
    }
  }, 300_000);
});

/** The metrics that are the run's curve (not its clock). */
function deterministic(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).filter(([key]) => !/(_s|_ms|seconds|per_s|per_second|time|throughput)$/.test(key)));
}
