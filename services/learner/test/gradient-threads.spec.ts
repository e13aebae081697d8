// Data parallelism over threads (threads/gradient-threads.ts) changes where a step's
// micro-batches are computed, never the step: a learner with gradient threads takes the same
// steps as one without, bit for bit, with LoRA dropout, replays, the reference scored inside
// the micro-batches and DGPO's whole groups; and a learner whose threads cannot start says
// so and trains on its own thread; one whose thread dies fails that step and starts a new one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useBackend, type CausalLM } from "@lean-grpo/lm";
import { Learner, type StepRequest } from "../src/training/learner.js";
import { microBatchTasks, passInputs, stepGradients, sumShares } from "../src/training/step-gradients.js";
import { prepareBatch } from "../src/training/prepared-batch.js";
import { GradientThreads } from "../src/threads/gradient-threads.js";
import { algorithmNamed } from "../src/algorithms/registry.js";
import type { TrainingExample } from "../src/training/training-example.js";
import { fixtureExamples, readAlgorithmFixture } from "./support/algorithm-fixtures.js";
import { learnerOptions, loadTinyModel } from "./support/learner-setup.js";
import { fixturePath } from "../../../packages/lm/test/support/fixtures.js";

const examples: TrainingExample[] = fixtureExamples(await readAlgorithmFixture());
const MODEL_DIR = fixturePath("qwen2-tiny");

function request(step: number, algorithm: string, algorithmConfig: Record<string, unknown>): StepRequest {
  const batch = examples.map((e, i) => ({ ...e, reward: e.reward + 0.1 * ((i * step) % 3) }));
  return { algorithm, algorithmConfig, mode: "rl", examples: batch, step, expectedSamples: 0, numGenerations: 0 };
}

const weights = (learner: Learner) => new Map(learner.policy.peftTensors().map((t) => [t.key, Array.from(t.data)]));
const withoutTiming = (metrics: Record<string, number>) => {
  const { tokens_per_second: _, ...rest } = metrics;
  return rest;
};

describe("gradient threads", () => {
  let model: CausalLM;
  beforeAll(async () => {
    await useBackend("cpu");
    model = await loadTinyModel();
  });
  afterAll(() => model.dispose());

  const cases: [string, string, Record<string, unknown>, number][] = [
    // β ≠ 0: the reference is scored inside each micro-batch, on whichever thread takes it.
    ["grpo with a KL term", "grpo", { beta: 0.04 }, 0],
    // Whole groups per micro-batch, two updates from one batch (the reference kept for the replay), LoRA dropout.
    ["dgpo with replays and dropout", "dgpo", { num_iterations: 2, kl_estimator: "k2" }, 0.1],
  ];
  it.each(cases)("%s: the steps on three threads equal the steps on one", async (_name, algorithm, config, dropout) => {
    const options = learnerOptions({
      lora: { rank: 4, alpha: 8, targetModules: ["q_proj", "v_proj", "down_proj"], dropout, useRslora: false },
      // Every row (DGPO: every group) a micro-batch of its own.
      microBatchTokens: 1,
    });
    const one = new Learner(model, { ...options, threads: 1 });
    const three = new Learner(model, { ...options, threads: 3, modelDir: MODEL_DIR });
    try {
      for (const step of [1, 2]) {
        const a = await one.trainStep(request(step, algorithm, config));
        const b = await three.trainStep(request(step, algorithm, config));
        expect(a.metrics.micro_batches).toBeGreaterThan(1);
        expect(withoutTiming(b.metrics)).toEqual(withoutTiming(a.metrics));
        expect(weights(three)).toEqual(weights(one));
      }
    } finally {
      one.dispose();
      three.dispose();
    }
  });

  it("the threads compute micro-batches, and the shares add up to the one-thread gradient", async () => {
    const learner = new Learner(model, learnerOptions({ microBatchTokens: 1 }));
    const settings = { ...algorithmNamed("grpo").resolve({ beta: 0.04 }), temperature: 1, topK: 0, topP: 1 };
    const inputs = {
      model,
      adapter: learner.policy,
      settings,
      batch: prepareBatch(examples, settings, "rl"),
      old: null,
      ref: null,
      scoreReference: true,
      microBatchTokens: 1,
    };
    const threads = await GradientThreads.start(1, { modelDir: MODEL_DIR, backend: "cpu", lora: learner.policy.config });
    try {
      const tasks = microBatchTasks(inputs);
      expect(tasks.length).toBeGreaterThan(3);
      const parallel = sumShares(await threads.run(model, learner.policy, passInputs(inputs), tasks), passInputs(inputs));
      expect(threads.sharesFromThreads).toBeGreaterThan(0);
      expect(threads.sharesFromThreads).toBeLessThan(tasks.length);
      const serial = stepGradients(inputs);
      expect(parallel.loss).toBe(serial.loss);
      expect(parallel.referenceLogprobs).toEqual(serial.referenceLogprobs);
      expect(parallel.detachedLogprobs).toEqual(serial.detachedLogprobs);
      for (const [key, grad] of serial.grads) expect(Array.from(parallel.grads.get(key)!.dataSync())).toEqual(Array.from(grad.dataSync()));
    } finally {
      await threads.close();
      learner.dispose();
    }
  });

  it("a gradient thread that dies fails that step, changing nothing, and the next step starts a new one", async () => {
    const options = learnerOptions({ microBatchTokens: 1 });
    const one = new Learner(model, options);
    const two = new Learner(model, { ...options, threads: 2, modelDir: MODEL_DIR });
    try {
      await one.trainStep(request(1, "grpo", { beta: 0.04 }));
      await two.trainStep(request(1, "grpo", { beta: 0.04 }));
      // The thread dies between steps (as a crashed thread would): failure injected from outside.
      const started = await (two as unknown as { gradientThreads: Promise<GradientThreads> }).gradientThreads;
      await (started as unknown as { workers: { terminate(): Promise<number> }[] }).workers[0]!.terminate();
      await expect(two.trainStep(request(2, "grpo", { beta: 0.04 }))).rejects.toThrow(/gradient thread exited/);
      expect(two.step).toBe(1);
      const a = await one.trainStep(request(2, "grpo", { beta: 0.04 }));
      const b = await two.trainStep(request(2, "grpo", { beta: 0.04 }));
      expect(withoutTiming(b.metrics)).toEqual(withoutTiming(a.metrics));
      expect(weights(two)).toEqual(weights(one));
    } finally {
      one.dispose();
      two.dispose();
    }
  });

  it("a learner whose gradient threads cannot start warns and trains on its own thread", async () => {
    const options = learnerOptions({ microBatchTokens: 40 });
    const one = new Learner(model, options);
    const broken = new Learner(model, { ...options, threads: 2, modelDir: "/nonexistent/model" });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      const a = await one.trainStep(request(1, "grpo", { beta: 0.04 }));
      const b = await broken.trainStep(request(1, "grpo", { beta: 0.04 }));
      expect(withoutTiming(b.metrics)).toEqual(withoutTiming(a.metrics));
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.join("\n")).toMatch(/gradient thread\(s\) did not start .*nonexistent.*training on one thread/s);
    } finally {
      process.off("warning", onWarning);
      one.dispose();
      broken.dispose();
    }
  });
});
