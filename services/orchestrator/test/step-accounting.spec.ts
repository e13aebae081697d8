// What a step sends and records, apart from the mesh: the TrainStep header in tactic
// and async runs, and the timing breakdown when rollouts overlapped the previous step.
import { create } from "@bufbuild/protobuf";
import { CompletionSchema, TheoremSchema } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { describe, expect, it } from "vitest";
import type { RolloutGroup } from "../src/run/rollout/rollout.js";
import { ASYNC_IMPORTANCE_SAMPLING_CAP, RunConfigSchema } from "../src/run/config/run-config.js";
import { stepMetrics, stepTimings } from "../src/run/outputs/step-record.js";
import type { StepRollouts } from "../src/run/rollout/step-rollouts.js";
import { stepAlgorithmConfig, trainingStream } from "../src/run/training/training-stream.js";

function group(id: string, turns: number[], rewards: number[]): RolloutGroup {
  return {
    groupId: id,
    theorem: create(TheoremSchema, { id }),
    samples: turns.map((n, i) => ({
      sampleId: `${id}/${i}`,
      promptTokenIds: [1, i],
      completion: create(CompletionSchema, { tokenIds: Array(n).fill(5), logprobs: Array(n).fill(-1) }),
      reward: 0,
    })),
    rewards,
    solved: rewards.map((r) => r === 1),
    rewardStd: 0,
    proofSteps: rewards.map(() => 2),
    generateS: 3,
    verifyS: 1,
    scoreS: 0,
  };
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

describe("the TrainStep header", () => {
  it("sends num_generations 0 in tactic mode, where a group has a sample per turn", async () => {
    const config = RunConfigSchema.parse({ training: { mode: "tactic", num_generations: 2 } });
    const parts = await collect(trainingStream("run", config, [group("g0", [3, 4, 2], [1, 0]), group("g1", [1], [0, 0])]));
    expect(parts[0]!.part).toMatchObject({ case: "header", value: { numGenerations: 0, expectedSamples: 4 } });
    expect(parts.slice(1).map((p) => (p.part as { value: { groupId: string; sampleId: string } }).value.sampleId)).toEqual([
      "g0/0",
      "g0/1",
      "g0/2",
      "g1/0",
    ]);
    const whole = RunConfigSchema.parse({ training: { num_generations: 3 } });
    const [header] = await collect(trainingStream("run", whole, [group("g0", [1, 1, 1], [1, 0, 0])]));
    expect(header!.part).toMatchObject({ case: "header", value: { numGenerations: 3 } });
  });

  it("asks for truncated importance sampling in async runs unless algorithm.config chose", () => {
    // max_completion_length is the generation budget, training.max_tokens (64 by default).
    const budget = { max_completion_length: 64 };
    expect(stepAlgorithmConfig(RunConfigSchema.parse({ algorithm: { config: { beta: 0.1 } } }))).toEqual({ beta: 0.1, ...budget });
    expect(stepAlgorithmConfig(RunConfigSchema.parse({ algorithm: { config: { beta: 0.1 } }, training: { async: true } }))).toEqual({
      beta: 0.1,
      ...budget,
      importance_sampling_cap: ASYNC_IMPORTANCE_SAMPLING_CAP,
      importance_sampling_level: "token",
      importance_sampling_action: "truncate",
    });
    for (const chosen of [{ importance_sampling_cap: 5 }, { truncated_is: 3 }, { importance_sampling_cap: null }]) {
      expect(stepAlgorithmConfig(RunConfigSchema.parse({ algorithm: { config: chosen }, training: { async: true } }))).toEqual({
        ...chosen,
        ...budget,
      });
    }
  });

  it("sends the generation budget as max_completion_length (Dr. GRPO's constant), by construction", () => {
    const config = RunConfigSchema.parse({ algorithm: { name: "drgrpo" }, training: { max_tokens: 24 } });
    expect(stepAlgorithmConfig(config)).toEqual({ max_completion_length: 24 });
  });
});

describe("a step's record", () => {
  const rollouts = (startedAt: number, endedAt: number): StepRollouts => ({
    step: 2,
    adapter: { name: "policy-v1", version: 1 },
    groups: [group("g0", [2, 2], [1, 0])],
    rolled: [group("g0", [2, 2], [1, 0])],
    dropped: 0,
    startedAt,
    endedAt,
  });

  it("splits only the wait for rollouts between phases; what ran during the previous step is overlap, outside total_s", () => {
    // Rollouts ran 1000..5000 ms; the step began at 4000 and had them at 5000.
    const timings = stepTimings(rollouts(1000, 5000), { stepStart: 4000, rolloutsReady: 5000, syncStart: 7000, end: 7500 });
    expect(timings.rollout_overlap_s).toBeCloseTo(3);
    expect(timings.generate_s).toBeCloseTo(0.75);
    expect(timings.verify_s).toBeCloseTo(0.25);
    expect(timings.train_s).toBeCloseTo(2);
    expect(timings.sync_s).toBeCloseTo(0.5);
    expect(timings.total_s).toBeCloseTo(3.5);
    expect(timings.other_s).toBeCloseTo(0);
  });

  it("has no overlap when the step rolled out its own batch", () => {
    const timings = stepTimings(rollouts(4000, 6000), { stepStart: 4000, rolloutsReady: 6000, syncStart: 7000, end: 7000 });
    expect(timings.rollout_overlap_s).toBe(0);
    expect(timings.generate_s + timings.verify_s + timings.score_s).toBeCloseTo(2);
    expect(timings.total_s).toBeCloseTo(3);
  });

  it("counts the policy lag in versions, and the tactic metrics in tactic mode", () => {
    const metrics = stepMetrics({ rollouts: rollouts(0, 1), trained: { loss: 0.5 }, trainedFromVersion: 2, samplesSent: 2, tactic: true });
    expect(metrics).toMatchObject({
      loss: 0.5,
      policy_lag: 1,
      proof_steps_mean: 2,
      samples_sent: 2,
      proofs_not_started: 0,
      proof_sessions_restarted: 0,
      reward_mean: 0.5,
      pass_rate: 0.5,
      trained: 1,
    });
    expect(
      stepMetrics({ rollouts: rollouts(0, 1), trained: undefined, trainedFromVersion: 1, samplesSent: 0, tactic: false }),
    ).not.toHaveProperty("proof_steps_mean");
  });

  it("sums the proofs checked against a theorem that does not elaborate, only where something was verified", () => {
    const verified = (count: number) => ({ ...group("g", [2, 2], [0, 0]), theoremErrors: { count } });
    const step = (rolled: RolloutGroup[]) =>
      stepMetrics({ rollouts: { ...rollouts(0, 1), rolled }, trained: undefined, trainedFromVersion: 1, samplesSent: 0, tactic: false });
    expect(step([verified(2), verified(0), verified(3)]).verifier_theorem_errors).toBe(5);
    expect(step([verified(0)]).verifier_theorem_errors).toBe(0);
    // Math groups verify nothing: the metric is absent, as for replay refusals.
    expect(step([group("m", [2], [1])])).not.toHaveProperty("verifier_theorem_errors");
  });
});
