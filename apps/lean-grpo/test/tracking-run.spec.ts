// Tracking never stops or slows a run. A tracker whose server never answers costs nothing per
// step (the stream only queues) and at most the finish timeout at the end, with a warning; one
// that fails is dropped with a warning while the others go on. And a whole `lean-grpo train`
// with W&B unreachable and TensorBoard on ends as the same run without tracking: the same
// curve, step for step.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
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

  it("W&B's history keeps the evaluation before step 1, and each later one in its step's row", async () => {
    const server = await startWandbStandIn();
    try {
      const runDir = path.join(dir, "evals");
      await mkdir(runDir, { recursive: true });
      // As a run writes them: step 0's evaluation before step 1's event, step 2's before step 2's event.
      const evaluation = (step: number, accuracy: number) =>
        JSON.stringify({ step, heldout_accuracy: accuracy, solved: 1, problems: 4, seconds: 1 });
      await writeFile(path.join(runDir, "eval.jsonl"), `${evaluation(0, 0.25)}\n`);
      const config = resolveTracking(TrackingSchema.parse({ base_url: server.url }), true);
      const trackers = startTrackers(config, {
        runId: "evals",
        runDir,
        name: "evals",
        config: {},
        warn: () => {},
        env: { WANDB_API_KEY: "k" },
      });
      trackers.step(create(StepEventSchema, { step: 1n, metrics: { loss: 1 } }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await writeFile(path.join(runDir, "eval.jsonl"), `${evaluation(0, 0.25)}\n${evaluation(2, 0.5)}\n`);
      trackers.step(create(StepEventSchema, { step: 2n, metrics: { loss: 2 } }));
      await trackers.finish(create(RunSchema, { state: RunState.COMPLETED }));
      const rows = server.requests
        .flatMap((r) => (r.body.files as Record<string, { content: string[] }> | undefined)?.["wandb-history.jsonl"]?.content ?? [])
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(rows.map((r) => r._step)).toEqual([0, 1, 2]);
      expect(rows[0]).toMatchObject({ "eval/heldout_accuracy": 0.25 });
      expect(rows[1]).toMatchObject({ "train/loss": 1 });
      expect(rows[2]).toMatchObject({ "train/loss": 2, "eval/heldout_accuracy": 0.5 });
    } finally {
      await server.close();
    }
  });

  it("lean-grpo train with W&B unreachable and TensorBoard on ends as the run without tracking, the failure in the run's log", async () => {
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
      // The run's logs are written at warn and above here (tests log nothing by default).
      process.env.LOG_LEVEL = "warn";
      const tracked = await train("tracked", [
        `logging.base_url=http://127.0.0.1:${await closedPort()}`,
        "logging.report_to=[wandb, tensorboard]",
      ]);
      delete process.env.LOG_LEVEL;
      for (const outputs of [plain, tracked]) expect((await outputs.readRun()).state).toBe("COMPLETED");
      const curve = (records: StepRecord[]) => records.map((r) => ({ step: r.step, metrics: deterministic(r.metrics) }));
      const [a, b] = [curve(await plain.readSteps()), curve(await tracked.readSteps())];
      expect(a).toHaveLength(2);
      expect(b).toEqual(a);
      expect(existsSync(path.join(tracked.dir, "tensorboard"))).toBe(true);
      expect(existsSync(path.join(plain.dir, "tensorboard"))).toBe(false);
      // The tracker's failure is in the run's own logs, not only on the terminal.
      const log = readFileSync(path.join(tracked.dir, "logs", "tracking.log"), "utf8");
      expect(log).toMatch(/"level":40.*tracking: W&B \(online\) failed and is off for the rest of the run \(the run goes on\)/);
    } finally {
      delete process.env.LOG_LEVEL;
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
