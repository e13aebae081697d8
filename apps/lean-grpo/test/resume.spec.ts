// Resume loses nothing: a run stopped (StopRun) or cut off (its learner process SIGKILLed
// mid-run) continues with --resume from its last checkpoint with the same data order and
// step numbers, and ends with the same metrics and the same adapter bytes as a run of the
// same seed that was never interrupted.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunState, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { StepRecord } from "@lean-grpo/orchestrator";
import { freePort, startLearnerProcess, type LearnerProcess } from "./support/learner-process.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { watchToEnd, withMesh } from "./support/orchestrator-client.js";
import { runAdvice } from "../src/commands/run-advice.js";

const STEPS = 5;
// "shaped" gives partial credit, so groups have reward variance and every step moves the adapter.
const CONFIG = { algorithm: { name: "grpo" }, reward: { preset: "shaped" }, training: tinyTraining(STEPS, { seed: 7 }) };

let fixture: MeshFixture;
let baseline: { steps: StepRecord[]; adapter: Buffer };

async function outputsOf(run: Run): Promise<{ steps: StepRecord[]; adapter: Buffer }> {
  const steps = (await readFile(path.join(run.outputDir, "metrics.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as StepRecord);
  const version = steps.at(-1)!.adapter_version;
  return { steps, adapter: await readFile(path.join(run.outputDir, "adapters", `policy-v${version}`, "adapter_model.safetensors")) };
}

/** Everything a step computed; timings, throughput and wall-clock time differ between runs by nature. */
function computed(steps: StepRecord[]) {
  return steps.map(({ step, adapter_version, metrics }) => {
    const { tokens_per_second: _throughput, ...rest } = metrics;
    return { step, adapter_version, metrics: rest };
  });
}

beforeAll(async () => {
  fixture = await meshFixture();
  baseline = await withMesh(await fixture.start(), async (client) => {
    await client.startRun({ datasetPath: fixture.dataset, runId: "uninterrupted", config: CONFIG });
    const done = await watchToEnd(client, "uninterrupted");
    expect(done.state).toBe(RunState.COMPLETED);
    return outputsOf(done);
  });
  expect(baseline.steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5]);
  // The comparison below means something only if training changed the adapter along the way.
  expect(baseline.steps.some((s) => (s.metrics.reward_std ?? 0) > 0)).toBe(true);
  const first = await readFile(path.join(fixture.runsDir, "uninterrupted", "adapters", "policy-v1", "adapter_model.safetensors"));
  expect(first.equals(baseline.adapter)).toBe(false);
}, 120_000);
afterAll(() => fixture?.cleanup());

describe("resume", () => {
  it("a run stopped with StopRun resumes at the next step and ends as an uninterrupted run does", async () => {
    const stopped = await withMesh(await fixture.start(), async (client) => {
      await client.startRun({ datasetPath: fixture.dataset, runId: "stopped", config: CONFIG });
      return watchToEnd(client, "stopped", (step) => step === 2 && client.stopRun({ runId: "stopped" }));
    });
    expect(stopped.state).toBe(RunState.STOPPED);
    // StopRun finishes the step in flight and checkpoints where it stopped.
    expect(Number(stopped.step)).toBeGreaterThanOrEqual(2);
    expect(Number(stopped.step)).toBeLessThan(STEPS);
    expect(stopped.lastCheckpointStep).toBe(stopped.step);

    // A fresh mesh (new learner, new sampler): everything comes from runs/<id>/.
    const steps: number[] = [];
    const resumed = await withMesh(await fixture.start(), async (client) => {
      const { run } = await client.startRun({ resumeRunId: "stopped", datasetPath: fixture.dataset });
      expect(run?.step).toBe(stopped.step);
      return watchToEnd(client, "stopped", (step) => steps.push(step));
    });
    expect(resumed.state).toBe(RunState.COMPLETED);
    expect(steps).toEqual(Array.from({ length: STEPS - Number(stopped.step) }, (_, i) => Number(stopped.step) + 1 + i));
    const outputs = await outputsOf(resumed);
    expect(computed(outputs.steps)).toEqual(computed(baseline.steps));
    expect(outputs.adapter.equals(baseline.adapter)).toBe(true);
  }, 120_000);

  it("a run whose learner process is SIGKILLed stops at its last checkpoint naming the learner, and resumes losing nothing", async () => {
    const port = await freePort();
    let learner: LearnerProcess = await startLearnerProcess(port, fixture.learnerOverrides);
    try {
      const lost = await withMesh(await fixture.start({ learnerUrl: learner.url }), async (client) => {
        await client.startRun({ datasetPath: fixture.dataset, runId: "killed", config: CONFIG });
        // After step 3 the learner has trained past the step-2 checkpoint: that work is lost with it.
        return watchToEnd(client, "killed", (step) => step === 3 && learner.kill());
      });
      expect(lost.state).toBe(RunState.STOPPED);
      expect(lost.error).toMatch(/lost the learner service at http:\/\/127\.0\.0\.1:\d+/);
      // The error says what failed; the CLI's advice (from state and checkpoint) says how to go on.
      expect(lost.error).not.toContain("--resume");
      expect(runAdvice(lost, true)).toMatch(/^lean-grpo train --resume killed continues from the checkpoint of step [24]$/);
      expect(Number(lost.step)).toBeLessThan(STEPS);
      const checkpoint = Number(lost.lastCheckpointStep);
      expect([2, 4]).toContain(checkpoint);
      const before = await outputsOf(lost);
      expect(before.steps.at(-1)!.step).toBeGreaterThanOrEqual(3);

      learner = await startLearnerProcess(port, fixture.learnerOverrides);
      const steps: number[] = [];
      const resumed = await withMesh(await fixture.start({ learnerUrl: learner.url }), async (client) => {
        await client.startRun({ resumeRunId: "killed", datasetPath: fixture.dataset });
        return watchToEnd(client, "killed", (step) => steps.push(step));
      });
      expect(resumed.state).toBe(RunState.COMPLETED);
      expect(resumed.error).toBe("");
      // Steps after the checkpoint are redone under their own numbers, not appended after them.
      expect(steps).toEqual(Array.from({ length: STEPS - checkpoint }, (_, i) => checkpoint + 1 + i));
      const outputs = await outputsOf(resumed);
      expect(computed(outputs.steps)).toEqual(computed(baseline.steps));
      expect(outputs.adapter.equals(baseline.adapter)).toBe(true);
    } finally {
      await learner.kill();
    }
  }, 120_000);
});
