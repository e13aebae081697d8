// The GRPO-family fixtures written by scripts/reference/make_algorithm_fixtures.py (an
// independent PyTorch reference, grpo_reference.py), and helpers to compare against them.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import * as tf from "@tensorflow/tfjs-core";
import { expect } from "vitest";
import type { TrainingExample } from "../../src/training/training-example.js";
import { readFixtureTensors } from "../../../../packages/lm/test/support/fixtures.js";

/** The learner's own fixtures; the model and adapter they use are the model library's (packages/lm/test/fixtures). */
export const ALGORITHM_FIXTURES = fileURLToPath(new URL("../fixtures/algorithms/", import.meta.url));

export interface AlgorithmCase {
  name: string;
  algorithm: string;
  config: Record<string, unknown>;
  mode: "rl" | "sft";
  advantages: number[] | null;
  loss: number;
  metrics: Partial<Record<"clip_ratio_low_mean" | "clip_ratio_high_mean" | "clip_ratio_region_mean" | "kl", number>>;
  gradients: string;
}

/** The contract's SamplingDistribution in the fixture's (snake_case) terms. */
export interface FixtureSampling {
  temperature: number;
  top_k: number;
  top_p: number;
}

/** A case scored under a sampling distribution, with its own old/sampler logprobs and truncation flags. */
export interface SamplingCase extends AlgorithmCase {
  sampling: FixtureSampling;
  truncated: boolean[];
  old: number[][];
  sampler: Array<number[] | null>;
}

export interface LogprobCase {
  name: string;
  adapter: boolean;
  sampling: FixtureSampling;
  logprobs: number[][];
  entropies: number[][];
}

export interface AlgorithmFixture {
  model: string;
  adapter: string;
  temperature: number;
  samples: Array<{
    group_id: string;
    prompt: number[];
    completion: number[];
    reward: number;
    truncated: boolean;
    old: number[];
    sampler: number[] | null;
  }>;
  zero_std_groups: string[];
  cases: AlgorithmCase[];
  sampling_cases: SamplingCase[];
  logprob_cases: LogprobCase[];
  adamw: {
    lr: number;
    betas: [number, number];
    eps: number;
    weight_decay: number;
    max_grad_norm: number;
    steps: number;
    grad_norms: number[];
    gradients: string;
    weights: string;
  };
  schedules: { warmup: number; total: number; multipliers: Record<"constant" | "linear" | "cosine", number[]> };
}

export async function readAlgorithmFixture(): Promise<AlgorithmFixture> {
  return JSON.parse(await readFile(`${ALGORITHM_FIXTURES}algorithms.json`, "utf8")) as AlgorithmFixture;
}

export function fixtureExamples(fixture: AlgorithmFixture, samplingCase?: SamplingCase): TrainingExample[] {
  return fixture.samples.map((s, i) => ({
    sampleId: `s${i}`,
    groupId: s.group_id,
    promptIds: s.prompt,
    completionIds: s.completion,
    samplerLogprobs: samplingCase ? samplingCase.sampler[i]! : s.sampler,
    reward: s.reward,
    truncated: samplingCase ? samplingCase.truncated[i]! : s.truncated,
  }));
}

/** The fixture's sampling as the contract's message (TrainStepHeader.sampling). */
export function samplingMessage(s: FixtureSampling): { temperature: number; topK: number; topP: number } {
  return { temperature: s.temperature, topK: s.top_k, topP: s.top_p };
}

/** Largest |got − expected| over a tensor, relative to the largest |expected|. */
export function relativeError(got: Float32Array | number[], expected: Float32Array): { error: number; scale: number } {
  let scale = 0;
  let worst = 0;
  expected.forEach((v, i) => {
    scale = Math.max(scale, Math.abs(v));
    worst = Math.max(worst, Math.abs(v - got[i]!));
  });
  return { error: worst / scale, scale };
}

/** A gradient or weight held in the learner's [in, r] / [r, out] layout, in PEFT's transposed layout. */
export async function peftLayout(tensor: tf.Tensor): Promise<Float32Array> {
  const transposed = tf.transpose(tensor);
  const data = (await transposed.data()) as Float32Array;
  transposed.dispose();
  return data;
}

/** Every LoRA gradient (learner layout, by PEFT key) within 1e-5 of the reference's file, relative to its largest entry. */
export async function expectReferenceGradients(grads: ReadonlyMap<string, tf.Tensor>, file: string): Promise<void> {
  const reference = await readFixtureTensors(`${ALGORITHM_FIXTURES}${file}`);
  expect(grads.size).toBe(reference.size);
  for (const [key, grad] of grads) {
    const { error, scale } = relativeError(await peftLayout(grad), reference.get(key)!);
    expect(scale, `${key} has a zero reference gradient`).toBeGreaterThan(0);
    expect(error, key).toBeLessThan(1e-5);
  }
}
