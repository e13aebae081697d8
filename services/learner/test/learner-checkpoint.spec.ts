// Checkpoint resume is exact, and a rejected step changes nothing. The run uses LoRA dropout,
// μ = 2 replays, micro-batches and a warm-up + cosine schedule, so that the optimizer
// moments, the update count (schedule position, bias corrections) and the dropout stream
// all have to come back for step 3 to match.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { AlgorithmConfigError } from "../src/algorithms/algorithm-config-error.js";
import { useBackend } from "@lean-grpo/lm";
import type { CausalLM } from "@lean-grpo/lm";
import { Learner, StepOrderError, UnknownVersionError, type StepRequest } from "../src/training/learner.js";
import { SampleError } from "../src/training/sample-error.js";
import type { TrainingExample } from "../src/training/training-example.js";
import { fixtureExamples, readAlgorithmFixture } from "./support/algorithm-fixtures.js";
import { learnerOptions, loadTinyModel } from "./support/learner-setup.js";
import { inCheckpointDirectory } from "./support/checkpoint-directory.js";

const examples: TrainingExample[] = fixtureExamples(await readAlgorithmFixture());
const options = learnerOptions({
  lora: { rank: 4, alpha: 8, targetModules: ["q_proj", "v_proj", "down_proj"], dropout: 0.1, useRslora: false },
  optimizer: { ...learnerOptions().optimizer, schedule: { name: "cosine", warmupSteps: 2, totalSteps: 10 } },
  microBatchTokens: 40,
});

function request(step: number, overrides: Partial<StepRequest> = {}): StepRequest {
  // Rewards shift with the step so that every step differs.
  const batch = examples.map((e, i) => ({ ...e, reward: e.reward + 0.1 * ((i * step) % 3) }));
  return {
    algorithm: "dgpo",
    algorithmConfig: { num_iterations: 2, kl_estimator: "k2" },
    mode: "rl",
    examples: batch,
    step,
    expectedSamples: 0,
    numGenerations: 0,
    ...overrides,
  };
}

function weights(learner: Learner): Map<string, Float32Array> {
  return new Map(learner.policy.peftTensors().map((t) => [t.key, t.data]));
}

describe("learner checkpoints and rejected steps", () => {
  let model: CausalLM;
  let dir: string;
  beforeAll(async () => {
    await useBackend("cpu");
    model = await loadTinyModel();
    dir = await mkdtemp(path.join(tmpdir(), "learner-ckpt-"));
  });
  afterAll(async () => {
    model.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("a learner restored after step 2 takes the same step 3 as one that never stopped, bit for bit", async () => {
    const straight = new Learner(model, options);
    const stopped = new Learner(model, options);
    // Another seed: the checkpoint's seed must win.
    const restarted = new Learner(model, { ...options, seed: 12345 });
    try {
      for (const step of [1, 2]) {
        await straight.trainStep(request(step));
        await stopped.trainStep(request(step));
      }
      const saved = await inCheckpointDirectory(dir, "step-2", (d) => stopped.saveCheckpoint(d), true);
      expect(saved).toMatchObject({ step: 2, adapterVersion: 2 });
      expect(saved.sizeBytes).toBeGreaterThan(0);
      expect(await inCheckpointDirectory(dir, "step-2", (d) => restarted.loadCheckpoint(d))).toEqual({
        step: 2,
        adapterVersion: 2,
        algorithm: "dgpo",
      });
      expect(restarted.optimizerUpdates).toBe(4);

      const expected = await straight.trainStep(request(3));
      const got = await restarted.trainStep(request(3));
      expect(got.step).toBe(3);
      expect(got.adapterVersion).toBe(3);
      expect(got.metrics.loss).toBe(expected.metrics.loss);
      expect(got.metrics.learning_rate).toBe(expected.metrics.learning_rate);
      const a = weights(straight);
      for (const [key, data] of weights(restarted)) expect(data, key).toEqual(a.get(key));
      // The step really moved the weights, so equality is not trivial.
      expect(weights(stopped).get([...a.keys()][0]!)).not.toEqual(a.get([...a.keys()][0]!));
    } finally {
      straight.dispose();
      stopped.dispose();
      restarted.dispose();
    }
  });

  it("a bad checkpoint directory is refused and leaves the learner as it was", async () => {
    const learner = new Learner(model, options);
    try {
      await learner.trainStep(request(1));
      const before = weights(learner);
      await mkdir(path.join(dir, "missing"));
      await expect(inCheckpointDirectory(dir, "missing", (d) => learner.loadCheckpoint(d))).rejects.toThrow(
        /trainer_state.json: ENOENT; is it a directory written by SaveCheckpoint/,
      );
      expect(learner.step).toBe(1);
      expect(weights(learner)).toEqual(before);
    } finally {
      learner.dispose();
    }
  });

  it.each([
    [
      "an id out of the vocabulary",
      (e: TrainingExample[]) => {
        e[2] = { ...e[2]!, completionIds: [1, 96] };
      },
      SampleError,
      'samples[2].completion_token_ids[1] = 96 is outside the model\'s vocabulary [0, 96) (sample_id "s2")',
    ],
    [
      "lengths that disagree",
      (e: TrainingExample[]) => {
        e[1] = { ...e[1]!, samplerLogprobs: [-1] };
      },
      SampleError,
      "samples[1].sampler_logprobs has 1 values but samples[1].completion_token_ids has 2",
    ],
    [
      "a NaN reward",
      (e: TrainingExample[]) => {
        e[4] = { ...e[4]!, reward: Number.NaN };
      },
      SampleError,
      'samples[4].reward is NaN (sample_id "s4")',
    ],
    [
      "an empty group id",
      (e: TrainingExample[]) => {
        e[0] = { ...e[0]!, groupId: "" };
      },
      SampleError,
      'samples[0].group_id is empty (sample_id "s0")',
    ],
    [
      "an empty completion",
      (e: TrainingExample[]) => {
        e[0] = { ...e[0]!, completionIds: [] };
      },
      SampleError,
      "completion_token_ids is empty",
    ],
  ] as const)("a batch with %s is refused, naming sample and field, and nothing changes", async (_what, spoil, kind, message) => {
    const learner = new Learner(model, options);
    try {
      await learner.trainStep(request(1));
      const before = weights(learner);
      const bad = request(2);
      spoil(bad.examples);
      const failure = learner.trainStep(bad);
      await expect(failure).rejects.toThrow(kind);
      await expect(failure).rejects.toThrow(message);
      expect([learner.step, learner.adapterVersion, learner.optimizerUpdates]).toEqual([1, 1, 2]);
      expect(weights(learner)).toEqual(before);
    } finally {
      learner.dispose();
    }
  });

  it("refuses unknown algorithms and keys, wrong group sizes and out-of-order steps, changing nothing", async () => {
    const learner = new Learner(model, options);
    try {
      await expect(learner.trainStep(request(1, { algorithm: "ppo" }))).rejects.toThrow(AlgorithmConfigError);
      await expect(learner.trainStep(request(1, { algorithmConfig: { group_size: 8 } }))).rejects.toThrow(
        /algorithm_config\.group_size is not a key of "dgpo"; valid keys: /,
      );
      await expect(learner.trainStep(request(1, { numGenerations: 4 }))).rejects.toThrow(
        'header.num_generations is 4 but group_id "g1" has 3 samples',
      );
      await expect(learner.trainStep(request(1, { expectedSamples: 3 }))).rejects.toThrow(
        "header.expected_samples is 3 but the stream delivered 9 samples",
      );
      await expect(learner.trainStep(request(5))).rejects.toThrow(StepOrderError);
      expect([learner.step, learner.adapterVersion, learner.optimizerUpdates]).toEqual([0, 0, 0]);
    } finally {
      learner.dispose();
    }
  });

  it("holds the last adapter versions for export and reports zero-spread groups", async () => {
    const learner = new Learner(model, options);
    try {
      for (const step of [1, 2, 3, 4]) {
        const result = await learner.trainStep(request(step, { algorithm: "dapo", algorithmConfig: {}, examples }));
        expect(result.zeroStdGroups).toEqual(["g2"]);
        expect(result.adapterName).toBe(`policy-v${step}`);
      }
      expect(learner.exportAdapter(0).version).toBe(4);
      expect(learner.exportAdapter(2).version).toBe(2);
      expect(() => learner.exportAdapter(1)).toThrow(UnknownVersionError);
    } finally {
      learner.dispose();
    }
  });

  it("an aborted step throws and changes nothing; steps leak no tensors", async () => {
    const learner = new Learner(model, options);
    try {
      await learner.trainStep(request(1));
      const tensors = tf.memory().numTensors;
      const before = weights(learner);
      const controller = new AbortController();
      controller.abort(new Error("deadline"));
      await expect(learner.trainStep(request(2, { signal: controller.signal }))).rejects.toThrow("deadline");
      expect([learner.step, learner.optimizerUpdates]).toEqual([1, 2]);
      expect(weights(learner)).toEqual(before);
      for (const step of [2, 3]) await learner.trainStep(request(step));
      expect(tf.memory().numTensors).toBe(tensors);
    } finally {
      learner.dispose();
    }
  });
});
