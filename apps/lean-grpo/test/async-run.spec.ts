// training.async over the real mesh: step k+1's rollouts run while step k trains, one
// policy version behind; every algorithm still trains, the policy lag and the overlap are
// recorded, and a stopped async run resumes to the same metrics and adapter bytes as one
// that never stopped.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunState, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { ALGORITHM_NAMES } from "@lean-grpo/learner";
import type { StepRecord } from "@lean-grpo/orchestrator";
import { freePort, startLearnerProcess, type LearnerProcess } from "./support/learner-process.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { watchToEnd, withMesh, type OrchestratorClient } from "./support/orchestrator-client.js";

let fixture: MeshFixture;
beforeAll(async () => {
  fixture = await meshFixture();
});
afterAll(() => fixture?.cleanup());

async function withOrchestrator<T>(body: (client: OrchestratorClient) => Promise<T>, learnerUrl?: string): Promise<T> {
  return withMesh(await fixture.start(learnerUrl ? { learnerUrl } : {}), body);
}

async function stepsOf(run: Run): Promise<StepRecord[]> {
  return (await readFile(path.join(run.outputDir, "metrics.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as StepRecord);
}

async function adapterOf(run: Run, steps: StepRecord[]): Promise<Buffer> {
  return readFile(path.join(run.outputDir, "adapters", `policy-v${steps.at(-1)!.adapter_version}`, "adapter_model.safetensors"));
}

/** Everything a step computed; timings and throughput differ between runs by nature. */
function computed(steps: StepRecord[]) {
  return steps.map(({ step, adapter_version, metrics }) => {
    const { tokens_per_second: _throughput, ...rest } = metrics;
    return { step, adapter_version, metrics: rest };
  });
}

describe("training.async", () => {
  // "shaped" gives partial credit, so groups have reward variance and DAPO keeps some.
  for (const algorithm of ALGORITHM_NAMES) {
    it(`${algorithm}: 4 steps, each sampled one policy version behind the one it trains`, async () => {
      const run = await withOrchestrator(async (client) => {
        await client.startRun({
          datasetPath: fixture.dataset,
          runId: `async-${algorithm}`,
          config: { algorithm: { name: algorithm }, reward: { preset: "shaped" }, training: tinyTraining(4, { async: true }) },
        });
        return watchToEnd(client, `async-${algorithm}`);
      });
      expect(run.error).toBe("");
      expect(run.state).toBe(RunState.COMPLETED);
      const steps = await stepsOf(run);
      expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4]);
      for (const step of [0, 2, 4]) expect(existsSync(path.join(run.outputDir, "checkpoints", `step-${step}`))).toBe(true);
      // Step 1 has nothing to overlap; step k samples with the adapter of step k−2, so it lags
      // by one version whenever step k−1 trained (DAPO may train nothing on a step).
      expect(steps[0]!.metrics.policy_lag).toBe(0);
      steps.slice(1).forEach((s, i) => expect(s.metrics.policy_lag).toBe(steps[i]!.metrics.trained));
      if (algorithm !== "dapo") expect(steps.map((s) => s.metrics.trained)).toEqual([1, 1, 1, 1]);
      for (const s of steps.filter((s) => s.metrics.trained === 1)) expect(Number.isFinite(s.metrics.loss)).toBe(true);
      expect(steps.filter((s) => s.metrics.trained === 1).length).toBeGreaterThan(0);
      for (const { step, timings } of steps) {
        // Overlapped generation is reported apart, never inside total_s.
        const parts = timings.generate_s! + timings.verify_s! + timings.score_s! + timings.train_s! + timings.sync_s! + timings.other_s!;
        expect(parts).toBeCloseTo(timings.total_s!, 6);
        if (step === 1) expect(timings.rollout_overlap_s).toBe(0);
        else expect(timings.rollout_overlap_s).toBeGreaterThan(0);
      }
    }, 120_000);
  }

  describe("resume", () => {
    const STEPS = 5;
    // "shaped" gives partial credit, so groups have reward variance and every step moves the adapter.
    const config = (async: boolean) => ({
      algorithm: { name: "grpo" },
      reward: { preset: "shaped" },
      training: tinyTraining(STEPS, { seed: 7, async }),
    });
    let baseline: { steps: StepRecord[]; adapter: Buffer };

    beforeAll(async () => {
      baseline = await withOrchestrator(async (client) => {
        await client.startRun({ datasetPath: fixture.dataset, runId: "async-uninterrupted", config: config(true) });
        const run = await watchToEnd(client, "async-uninterrupted");
        expect(run.state).toBe(RunState.COMPLETED);
        const steps = await stepsOf(run);
        return { steps, adapter: await adapterOf(run, steps) };
      });
    }, 120_000);

    it("samples differently from a synchronous run of the same seed (the lag is real)", async () => {
      const sync = await withOrchestrator(async (client) => {
        await client.startRun({ datasetPath: fixture.dataset, runId: "sync-same-seed", config: config(false) });
        return watchToEnd(client, "sync-same-seed");
      });
      const steps = await stepsOf(sync);
      expect(steps.map((s) => s.metrics.policy_lag)).toEqual([0, 0, 0, 0, 0]);
      expect(baseline.steps.map((s) => s.metrics.policy_lag)).toEqual([0, 1, 1, 1, 1]);
      // Step 1 samples the same completions in both; from step 2 on the async run sampled with older adapters.
      // (The losses differ slightly from step 1: async turns on the learner's importance-sampling correction.)
      const rollout = (s: StepRecord) => [
        s.metrics.reward_mean,
        s.metrics.pass_rate,
        s.metrics.completion_length_mean,
        s.metrics.num_tokens,
      ];
      expect(rollout(steps[0]!)).toEqual(rollout(baseline.steps[0]!));
      expect((await adapterOf(sync, steps)).equals(baseline.adapter)).toBe(false);
    }, 120_000);

    it("a stopped async run resumes with the adapter its next step was sampled with and ends as an uninterrupted one", async () => {
      const stopped = await withOrchestrator(async (client) => {
        await client.startRun({ datasetPath: fixture.dataset, runId: "async-stopped", config: config(true) });
        // Step 3 is no checkpoint step (checkpoint_every 2): step 4's rollouts are under way when it stops.
        return watchToEnd(client, "async-stopped", (step) => step === 3 && client.stopRun({ runId: "async-stopped" }));
      });
      expect(stopped.state).toBe(RunState.STOPPED);
      expect(Number(stopped.step)).toBeGreaterThanOrEqual(3);
      expect(Number(stopped.step)).toBeLessThan(STEPS);
      expect(stopped.lastCheckpointStep).toBe(stopped.step);
      // The prefetched step was cancelled, not recorded.
      expect((await stepsOf(stopped)).at(-1)!.step).toBe(Number(stopped.step));

      const resumedSteps: number[] = [];
      const resumed = await withOrchestrator(async (client) => {
        await client.startRun({ resumeRunId: "async-stopped", datasetPath: fixture.dataset });
        return watchToEnd(client, "async-stopped", (step) => resumedSteps.push(step));
      });
      expect(resumed.error).toBe("");
      expect(resumed.state).toBe(RunState.COMPLETED);
      expect(resumedSteps).toEqual(Array.from({ length: STEPS - Number(stopped.step) }, (_, i) => Number(stopped.step) + 1 + i));
      const steps = await stepsOf(resumed);
      expect(computed(steps)).toEqual(computed(baseline.steps));
      expect((await adapterOf(resumed, steps)).equals(baseline.adapter)).toBe(true);
    }, 120_000);

    it("an async run whose learner is SIGKILLed mid-run stops cleanly at its last checkpoint and resumes losing nothing", async () => {
      const port = await freePort();
      let learner: LearnerProcess = await startLearnerProcess(port, fixture.learnerOverrides);
      try {
        const lost = await withOrchestrator(async (client) => {
          await client.startRun({ datasetPath: fixture.dataset, runId: "async-killed", config: config(true) });
          // Killed while step 4 trains and step 5's rollouts are under way.
          return watchToEnd(client, "async-killed", (step) => step === 3 && learner.kill());
        }, learner.url);
        expect(lost.state).toBe(RunState.STOPPED);
        expect(lost.error).toMatch(/lost the learner service/);
        const checkpoint = Number(lost.lastCheckpointStep);
        expect([2, 4]).toContain(checkpoint);

        learner = await startLearnerProcess(port, fixture.learnerOverrides);
        const resumed = await withOrchestrator(async (client) => {
          await client.startRun({ resumeRunId: "async-killed", datasetPath: fixture.dataset });
          return watchToEnd(client, "async-killed");
        }, learner.url);
        expect(resumed.error).toBe("");
        expect(resumed.state).toBe(RunState.COMPLETED);
        const steps = await stepsOf(resumed);
        expect(computed(steps)).toEqual(computed(baseline.steps));
        expect((await adapterOf(resumed, steps)).equals(baseline.adapter)).toBe(true);
      } finally {
        await learner.kill();
      }
    }, 120_000);
  });
});
