// The suite's fixtures: the batch of services/learner/test/fixtures/algorithms and what the
// independent PyTorch reference says a learner must answer for it over gRPC
// (fixtures/conformance.json, written by reference/make_conformance_fixtures.py).
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { readF32Safetensors } from "./peft-tensors.js";

const here = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
export const REPO_ROOT = here("../../../");
export const FIXTURES = here("./fixtures/");
/** A checkpoint at step 0 holding the model library's fixture adapter and zero AdamW moments. */
export const START_CHECKPOINT = here("./fixtures/start-checkpoint");
/** START_CHECKPOINT as a learner is given it: a copy in its checkpoint_dir (conformanceConfig makes it), named relative to that. */
export const START_CHECKPOINT_NAME = "start-checkpoint";
const MODELS = here("../../../packages/lm/test/fixtures/");

export interface ConformanceCase {
  name: string;
  algorithm: string;
  mode: "rl" | "sft";
  config: Record<string, number | string | boolean>;
  /** loss, grad_norm (before clipping), entropy; clip ratios and kl for RL. */
  metrics: Record<string, number>;
  /** The PEFT adapter after one AdamW step from START_CHECKPOINT. */
  adapter: string;
}

export interface ConformanceFixture {
  model: string;
  adapter: string;
  temperature: number;
  optimizer: {
    learning_rate: number;
    beta1: number;
    beta2: number;
    epsilon: number;
    weight_decay: number;
    max_grad_norm: number;
  };
  batch: {
    reward_mean: number;
    reward_std: number;
    frac_reward_zero_std: number;
    completion_length_mean: number;
    zero_std_groups: string[];
  };
  policy: { logprobs: number[][]; entropies: number[][] };
  reference: { logprobs: number[][] };
  cases: ConformanceCase[];
}

export interface BatchSample {
  sampleId: string;
  groupId: string;
  promptTokenIds: number[];
  completionTokenIds: number[];
  samplerLogprobs: number[];
  reward: number;
  truncated: boolean;
}

export async function readConformanceFixture(): Promise<{ fixture: ConformanceFixture; samples: BatchSample[]; modelDir: string }> {
  const fixture = JSON.parse(await readFile(`${FIXTURES}conformance.json`, "utf8")) as ConformanceFixture;
  const algorithms = JSON.parse(await readFile(`${REPO_ROOT}services/learner/test/fixtures/algorithms/algorithms.json`, "utf8")) as {
    samples: Array<{
      group_id: string;
      prompt: number[];
      completion: number[];
      reward: number;
      truncated: boolean;
      sampler: number[] | null;
    }>;
  };
  const samples = algorithms.samples.map((s, i) => ({
    sampleId: `s${i}`,
    groupId: s.group_id,
    promptTokenIds: s.prompt,
    completionTokenIds: s.completion,
    samplerLogprobs: s.sampler ?? [],
    reward: s.reward,
    truncated: s.truncated,
  }));
  return { fixture, samples, modelDir: `${MODELS}${fixture.model}` };
}

/** The adapter a case's step starts from (the model library's fixture adapter). */
export async function startAdapter(fixture: ConformanceFixture) {
  const file = `${MODELS}${fixture.adapter}/adapter_model.safetensors`;
  return readF32Safetensors(await readFile(file), file);
}

export async function expectedAdapter(c: ConformanceCase) {
  const file = `${FIXTURES}${c.adapter}`;
  return readF32Safetensors(await readFile(file), file);
}
