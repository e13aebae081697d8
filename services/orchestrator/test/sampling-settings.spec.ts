// The run's sampling settings and algorithm keys as the orchestrator checks and sends them:
// the seed aliases a learner lists are accepted, a second temperature that disagrees is
// refused naming both keys, and every sampling setting goes into TrainStepHeader.sampling.
import { create } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { AlgorithmInfoSchema } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { describe, expect, it } from "vitest";
import { describeAlgorithm } from "../src/run/config/learner-algorithm.js";
import type { MeshClients } from "../src/run/mesh-clients.js";
import { RunConfigSchema } from "../src/run/config/run-config.js";
import { stepSampling, trainingStream } from "../src/run/training/training-stream.js";
import { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";

// As both learners describe a knob with aliases (ListAlgorithms).
const grpo = create(AlgorithmInfoSchema, {
  name: "grpo",
  params: [
    { name: "temperature", type: "number", description: "sampling temperature" },
    { name: "epsilon", type: "number", description: "lower clip", aliases: ["clip_low"] },
    { name: "epsilon_high", type: "number", description: "upper clip", aliases: ["clip_high"] },
    { name: "importance_sampling_cap", type: "number", description: "TIS cap", aliases: ["truncated_is"] },
    { name: "max_completion_length", type: "integer", description: "the generation budget" },
  ],
});
const clients = {
  withRetry: (_: string, call: () => unknown) => call(),
  learner: { listAlgorithms: async () => ({ algorithms: [grpo] }) },
} as unknown as MeshClients;
const run = (config: Record<string, unknown>, training: Record<string, unknown> = {}) =>
  RunConfigSchema.parse({ algorithm: { name: "grpo", config }, training });

describe("algorithm keys", () => {
  it("accepts the seed aliases truncated_is, clip_low and clip_high", async () => {
    await expect(describeAlgorithm(clients, run({ truncated_is: 2, clip_low: 0.2, clip_high: 0.28 }))).resolves.toBe(grpo);
  });

  it("still refuses an unknown key, listing names and aliases", async () => {
    await expect(describeAlgorithm(clients, run({ truncated_iz: 2 }))).rejects.toThrow(/unknown key truncated_iz .*truncated_is/);
  });

  it("refuses algorithm.config.temperature that disagrees with training.temperature, naming both", async () => {
    const error = await describeAlgorithm(clients, run({ temperature: 1 }, { temperature: 0.7 })).catch((e) => e as ConnectError);
    expect(String(error)).toMatch(/algorithm\.config\.temperature is 1 but training\.temperature is 0\.7/);
    await expect(describeAlgorithm(clients, run({ temperature: 0.7 }, { temperature: 0.7 }))).resolves.toBe(grpo);
  });
});

describe("the generation budget", () => {
  it("refuses algorithm.config.max_completion_length that differs from training.max_tokens, naming both", async () => {
    const error = await describeAlgorithm(clients, run({ max_completion_length: 512 }, { max_tokens: 64 })).catch((e) => e as ConnectError);
    expect(String(error)).toMatch(/algorithm\.config\.max_completion_length is 512 but training\.max_tokens is 64/);
    await expect(describeAlgorithm(clients, run({ max_completion_length: 64 }, { max_tokens: 64 }))).resolves.toBe(grpo);
  });
});

describe("TrainStepHeader.sampling", () => {
  it("carries training.temperature, top_k and top_p, and model.reasoning_mask", async () => {
    const config = run({}, { temperature: 0.7, top_k: 20, top_p: 0.9 });
    expect(stepSampling(config)).toEqual({ temperature: 0.7, topK: 20, topP: 0.9, reasoningMask: ReasoningMask.FREE });
    expect(stepSampling({ ...config, model: { reasoning_mask: "strict" } }).reasoningMask).toBe(ReasoningMask.STRICT);
    const first = await trainingStream("r", config, []).next();
    expect(first.value).toMatchObject({ part: { case: "header", value: { sampling: { temperature: 0.7, topK: 20, topP: 0.9 } } } });
  });

  it("sends greedy as temperature 0, the one meaning of 0 for the sampler and the learner", () => {
    expect(stepSampling(run({}, { temperature: 0, top_k: 5, top_p: 0.5 }))).toEqual({
      temperature: 0,
      topK: 5,
      topP: 0.5,
      reasoningMask: ReasoningMask.FREE,
    });
  });
});
