// The PyTorch learner under torch.distributed.run with two ranks (gloo on CPU), started the way
// the mesh starts it for `services.learner.torchrun: {nproc_per_node: 2}`: rank 0 serves, the
// ranks split the batch and average gradients, and one step still gives the reference's adapter.
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedAdapter, readConformanceFixture, START_CHECKPOINT_NAME, startAdapter } from "./conformance-fixtures.js";
import { conformanceConfig } from "./learner-conformance.js";
import { exportedAdapter, type LearnerClient, learnerClient, trainStepStream, updateError } from "./learner-calls.js";
import type { RunningLearner } from "./learner-under-test.js";
import { PYTHON, torchUnavailable } from "./python-torch.js";
import { torchLearner } from "./torch-learner-under-test.js";

const { fixture, samples } = await readConformanceFixture();
// Debian's torch 1.13 on Python 3.11: torch.distributed.run cannot launch anything (its Std.from_str
// returns None under 3.11's enum). Any other torch runs this test.
const BROKEN_TORCHRUN = "import sys; from torch.distributed.elastic.multiprocessing.api import Std; sys.exit(Std.from_str('0') is None)";
const torchrunBroken = spawnSync(PYTHON, ["-c", BROKEN_TORCHRUN]).status !== 0;
const unavailable =
  torchUnavailable("torch, torch.distributed, grpc, google.protobuf") ??
  (torchrunBroken ? `${PYTHON}'s torch.distributed.run cannot launch (torch 1.13 on Python 3.11: Std.from_str('0') is None)` : null);
if (unavailable) console.warn(`skipping the torchrun learner test: ${unavailable}`);

describe.skipIf(unavailable !== null)("PyTorch learner under torchrun, 2 ranks", () => {
  let running: RunningLearner;
  let client: LearnerClient;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "torchrun-learner-"));
    running = await torchLearner(2).start(conformanceConfig(dir));
    client = learnerClient(running.url);
  }, 240_000);
  afterAll(async () => {
    await running?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(["grpo", "dapo"])("%s: one TrainStep gives the reference's loss and adapter", async (name) => {
    const c = fixture.cases.find((x) => x.name === name)!;
    await client.loadCheckpoint({ path: START_CHECKPOINT_NAME });
    const response = await client.trainStep(
      trainStepStream(
        { algorithm: c.algorithm, algorithmConfig: c.config, step: 1n, temperature: c.config.temperature as number },
        samples,
      ),
    );
    expect(Math.abs(response.metrics.loss! - c.metrics.loss!)).toBeLessThanOrEqual(1e-4 * Math.abs(c.metrics.loss!) + 1e-7);
    const start = await startAdapter(fixture);
    const { tensors } = await exportedAdapter(client);
    for (const [key, want] of await expectedAdapter(c)) {
      expect(updateError(start.get(key)!.data, tensors.get(key)!.data, want.data).error, key).toBeLessThan(1e-3);
    }
  });
});
