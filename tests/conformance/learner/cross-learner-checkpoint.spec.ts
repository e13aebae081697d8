// A checkpoint written by one learner is read by the other (../shared/DESIGN.md §1): after
// loading it, one identical TrainStep on each gives the same adapter. The second step
// starts from non-zero AdamW moments, so the optimizer state's layout is tested too.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConformanceFixture, START_CHECKPOINT_NAME } from "./conformance-fixtures.js";
import { conformanceConfig } from "./learner-conformance.js";
import { adapterDifference, exportedAdapter, type LearnerClient, learnerClient, trainStepStream, updateError } from "./learner-calls.js";
import type { LearnerUnderTest, RunningLearner } from "./learner-under-test.js";
import { torchUnavailable } from "./python-torch.js";
import { torchLearner } from "./torch-learner-under-test.js";
import { tsLearner } from "./ts-learner-under-test.js";

const { fixture, samples } = await readConformanceFixture();
const unavailable = torchUnavailable();
if (unavailable) console.warn(`skipping the cross-learner checkpoint test: ${unavailable}`);

const learners: LearnerUnderTest[] = [tsLearner, torchLearner()];
const grpo = fixture.cases.find((c) => c.name === "grpo")!;
const dapo = fixture.cases.find((c) => c.name === "dapo")!;

describe.skipIf(unavailable !== null)("checkpoints move between the TS and the PyTorch learner", () => {
  const running = new Map<string, { learner: RunningLearner; client: LearnerClient }>();
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "cross-learner-"));
    for (const learner of learners) {
      // One checkpoint_dir for both, as two learners sharing a volume: each reads what the other saved.
      const started = await learner.start(conformanceConfig(dir));
      running.set(learner.name, { learner: started, client: learnerClient(started.url) });
    }
  }, 240_000);
  afterAll(async () => {
    for (const { learner } of running.values()) await learner.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["ts", "torch"],
    ["torch", "ts"],
  ])("saved by the %s learner, loaded by both: the next step gives the same adapter", async (writer, reader) => {
    const saver = running.get(writer)!.client;
    await saver.loadCheckpoint({ path: START_CHECKPOINT_NAME });
    await saver.trainStep(trainStepStream({ algorithm: "grpo", algorithmConfig: grpo.config, step: 1n, temperature: 0.7 }, samples));
    const saved = await saver.saveCheckpoint({ path: `saved-by-${writer}` });
    const atSave = await exportedAdapter(saver);

    const after = new Map<string, Awaited<ReturnType<typeof exportedAdapter>>>();
    const losses = new Map<string, number>();
    for (const name of [writer, reader]) {
      const client = running.get(name)!.client;
      const loaded = await client.loadCheckpoint({ path: saved.path });
      expect(loaded, `${name} loads the ${writer} checkpoint`).toMatchObject({ step: 1n, adapterVersion: 1n, algorithm: "grpo" });
      expect(adapterDifference((await exportedAdapter(client)).tensors, atSave.tensors).error, `${name}'s adapter as loaded`).toBe(0);
      const response = await client.trainStep(
        trainStepStream({ algorithm: "dapo", algorithmConfig: dapo.config, step: 2n, temperature: 0.7 }, samples),
      );
      expect(response.step).toBe(2n);
      losses.set(name, response.metrics.loss!);
      after.set(name, await exportedAdapter(client));
    }
    const mine = after.get(writer)!.tensors;
    const theirs = after.get(reader)!.tensors;
    for (const [key, want] of mine) {
      const { error, scale } = updateError(atSave.tensors.get(key)!.data, theirs.get(key)!.data, want.data);
      expect(scale, `${key} moved`).toBeGreaterThan(0);
      expect(error, `${key}: ${reader}'s step vs ${writer}'s, relative to the update`).toBeLessThan(1e-3);
    }
    expect(Math.abs(losses.get(reader)! - losses.get(writer)!)).toBeLessThanOrEqual(1e-4 * Math.abs(losses.get(writer)!) + 1e-7);
  });
});
