// StartRun's guards against a client that asks for too much: three StartRuns at once
// get one slot between them (the check and the reservation happen before any await),
// and a run over the operator's run_limits is refused, naming the key, before the
// orchestrator reads a dataset or calls a service.
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { StartRunRequestSchema } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { serve, serviceRegistration, type RunningServer } from "@lean-grpo/kit";
import { OrchestratorConfigSchema } from "../src/config.js";
import { RunManager } from "../src/run/run-manager.js";

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.shutdown()));
});

/** A learner whose ListAlgorithms (StartRun's first call to the mesh) answers only when released; counts its calls. */
async function heldLearner() {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  const server = await serve({
    name: "held-learner",
    services: [
      serviceRegistration(LearnerService, {
        async listAlgorithms() {
          calls++;
          await released;
          return { algorithms: [] };
        },
      }),
    ],
    config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 200 } },
  });
  running.push(server);
  return { url: server.url, release, calls: () => calls };
}

function manager(learnerUrl: string, runLimits: Record<string, number> = {}) {
  const runsDir = mkdtempSync(path.join(tmpdir(), "start-run-limits-"));
  const config = OrchestratorConfigSchema.parse({
    runs_dir: runsDir,
    services: { inference: learnerUrl, reward: learnerUrl, learner: learnerUrl },
    service_retries: 0,
    run_limits: runLimits,
  });
  return { runs: new RunManager(config), runsDir };
}

const request = (runId: string, training: Record<string, number> = {}) =>
  create(StartRunRequestSchema, {
    runId,
    theorems: [{ id: "t1", statement: "theorem t1 : 1 + 1 = 2" }],
    config: { training: { steps: 2, batch_size: 1, num_generations: 2, ...training } },
  });

async function outcome(promise: Promise<unknown>): Promise<ConnectError | "started"> {
  return promise.then(
    () => "started",
    (e: unknown) => ConnectError.from(e),
  );
}

describe("StartRun's one-run slot", () => {
  it("three concurrent StartRuns: exactly one gets past the slot, the others are refused at once", async () => {
    const learner = await heldLearner();
    const { runs } = manager(learner.url);
    const calls = ["a", "b", "c"].map((id) => outcome(runs.start(request(id))));
    // The two refusals come back while the first is still waiting on the learner.
    const settled = await Promise.race([Promise.all([calls[1], calls[2]]), new Promise((r) => setTimeout(() => r("timeout"), 5_000))]);
    expect(settled).not.toBe("timeout");
    for (const refused of settled as ConnectError[]) {
      expect(refused).toBeInstanceOf(ConnectError);
      expect(refused.code).toBe(Code.FailedPrecondition);
      expect(refused.rawMessage).toContain("another StartRun is being prepared");
    }
    // Only the winner reached the learner.
    await waitFor(() => learner.calls() === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(learner.calls()).toBe(1);
    learner.release();
    // The winner fails its pre-flight here (this learner has no algorithms), and that frees the slot.
    const first = await calls[0];
    expect((first as ConnectError).rawMessage).toContain('algorithm.name: the learner has no algorithm "grpo"');
    const again = await outcome(runs.start(request("d")));
    expect((again as ConnectError).rawMessage).not.toContain("another StartRun");
    expect(learner.calls()).toBe(2);
  });
});

describe("run_limits", () => {
  it.each([
    [
      { batch_size: 1024, num_generations: 64 },
      "training.batch_size × training.num_generations = 1024 × 64 = 65536 completions per step is above this orchestrator's limit of 16384 (run_limits.max_rollouts_per_step)",
    ],
    [
      { steps: 10_000_000, checkpoint_every: 100_000 },
      "training.steps = 10000000 is above this orchestrator's limit of 100000 (run_limits.max_steps)",
    ],
    [
      { steps: 50_000, checkpoint_every: 1 },
      "training.steps = 50000 with training.checkpoint_every = 1 writes 50002 checkpoints, above this orchestrator's limit of 1000 (run_limits.max_checkpoints); raise checkpoint_every to at least 51",
    ],
  ])("refuses %o before calling any service or writing anything", async (training, message) => {
    const learner = await heldLearner();
    const { runs, runsDir } = manager(learner.url);
    const refused = await outcome(runs.start(request("big", training)));
    expect((refused as ConnectError).code).toBe(Code.InvalidArgument);
    expect((refused as ConnectError).rawMessage).toBe(message);
    expect(learner.calls()).toBe(0);
    expect(readdirSync(runsDir)).toEqual([]);
  });

  it("the operator's limits replace the defaults", async () => {
    const learner = await heldLearner();
    const { runs } = manager(learner.url, { max_steps: 10 });
    const refused = await outcome(runs.start(request("eleven", { steps: 11 })));
    expect((refused as ConnectError).rawMessage).toBe(
      "training.steps = 11 is above this orchestrator's limit of 10 (run_limits.max_steps)",
    );
  });

  it("refuses an unknown run_limits key, naming it", () => {
    expect(() => OrchestratorConfigSchema.parse({ run_limits: { max_stepz: 1 } })).toThrow(/max_stepz/);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000) {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
