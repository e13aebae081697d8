// algorithm_config validation, the seed's names, each algorithm's defining defaults, and the
// advantage / KL test vectors of grpo-math §2.3 and §5.1.
import { beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { groupAdvantages } from "../src/algorithms/advantages.js";
import { AlgorithmConfigError } from "../src/algorithms/algorithm-config-error.js";
import { klEstimate } from "../src/algorithms/kl-estimators.js";
import { useBackend } from "@lean-grpo/lm";
import { ALGORITHM_NAMES, algorithmNamed } from "../src/algorithms/registry.js";

describe("algorithm registry and algorithm_config", () => {
  it("knows the seed's five names and CISPO and SAPO, case-insensitively, and lists them for an unknown one", () => {
    expect(ALGORITHM_NAMES).toEqual(["grpo", "drgrpo", "dapo", "gspo", "dgpo", "cispo", "sapo"]);
    expect(algorithmNamed("DAPO").name).toBe("dapo");
    expect(() => algorithmNamed("ppo")).toThrow(
      new AlgorithmConfigError('algorithm "ppo" is not known; accepted: grpo, drgrpo, dapo, gspo, dgpo, cispo, sapo'),
    );
  });

  it("resolves the rollout correction with TRL's defaults and refuses knobs that cannot act", () => {
    const on = algorithmNamed("grpo").resolve({ importance_sampling_cap: 2 });
    expect([on.importanceSamplingLevel, on.importanceSamplingAction, on.importanceSamplingMin]).toEqual(["sequence", "mask", null]);
    expect(() => algorithmNamed("dapo").resolve({ importance_sampling_action: "truncate" })).toThrow(
      /sets importance_sampling_action but importance_sampling_cap is null for "dapo"/,
    );
    expect(() => algorithmNamed("grpo").resolve({ importance_sampling_cap: 2, importance_sampling_min: 2 })).toThrow(
      "algorithm_config.importance_sampling_min = 2 is not below importance_sampling_cap = 2; accepted: a lower bound under the cap, or null",
    );
    expect(() => algorithmNamed("grpo").resolve({ importance_sampling_cap: 2, importance_sampling_level: "batch" })).toThrow(
      'algorithm_config.importance_sampling_level = "batch" is not accepted by "grpo"; accepted: one of "token", "sequence"',
    );
  });

  it("CISPO and SAPO have no PPO clip range, and their own knobs", () => {
    expect(() => algorithmNamed("cispo").resolve({ epsilon: 0.2 })).toThrow(
      /algorithm_config\.epsilon is not a key of "cispo".*epsilon_max/,
    );
    expect(algorithmNamed("cispo").resolve({ epsilon_max: 3 })).toMatchObject({
      objective: "cispo",
      cispoRatioCap: 3,
      aggregation: "token-mean",
      beta: 0,
    });
    expect(algorithmNamed("sapo").resolve({})).toMatchObject({
      objective: "sapo",
      sapoTemperaturePositive: 1,
      sapoTemperatureNegative: 1.05,
    });
    expect(() => algorithmNamed("sapo").resolve({ sapo_temperature_neg: 0 })).toThrow(
      /sapo_temperature_neg = 0 .* accepted: a finite number > 0/,
    );
  });

  it("refuses an unknown key, listing the valid ones", () => {
    expect(() => algorithmNamed("gspo").resolve({ population_size: 100 })).toThrow(
      /algorithm_config\.population_size is not a key of "gspo"; valid keys: temperature, scale_rewards, epsilon/,
    );
    // DGPO's keys belong to DGPO only.
    expect(() => algorithmNamed("grpo").resolve({ dpo_beta: 0.1 })).toThrow(/algorithm_config\.dpo_beta is not a key of "grpo"/);
  });

  it("refuses bad values, naming the key and what is accepted", () => {
    expect(() => algorithmNamed("grpo").resolve({ epsilon: -1 })).toThrow(
      'algorithm_config.epsilon = -1 is not accepted by "grpo"; accepted: a finite number >= 0 and <= 1',
    );
    expect(() => algorithmNamed("grpo").resolve({ kl_estimator: "k4" })).toThrow(
      /accepted: one of "k1", "k2", "k3", "abs", "schulman", "mse"/,
    );
    expect(() => algorithmNamed("grpo").resolve({ num_iterations: 1.5 })).toThrow(/num_iterations = 1.5 .* an integer >= 1 and <= 64/);
    expect(() => algorithmNamed("dapo").resolve({ dynamic_sampling: "yes" })).toThrow(/dynamic_sampling = "yes" .* true or false/);
    expect(() => algorithmNamed("grpo").resolve({ epsilon: 0.1, clip_low: 0.2 })).toThrow(/sets "epsilon" twice/);
  });

  it("gives each algorithm the knobs that define it", () => {
    const grpo = algorithmNamed("grpo").resolve({});
    expect(grpo).toMatchObject({
      scaleRewards: "group",
      epsilonLow: 0.2,
      epsilonHigh: 0.2,
      beta: 0.04,
      klEstimator: "k3",
      aggregation: "seq-mean-token-mean",
      level: "token",
    });
    expect(algorithmNamed("drgrpo").resolve({})).toMatchObject({ scaleRewards: "none", beta: 0, aggregation: "seq-mean-token-sum-norm" });
    expect(algorithmNamed("dapo").resolve({})).toMatchObject({
      epsilonLow: 0.2,
      epsilonHigh: 0.28,
      beta: 0,
      aggregation: "token-mean",
      dynamicSampling: true,
    });
    expect(algorithmNamed("gspo").resolve({})).toMatchObject({ level: "sequence", epsilonLow: 3e-4, epsilonHigh: 4e-4, beta: 0 });
    expect(algorithmNamed("dgpo").resolve({})).toMatchObject({ dpoCoef: 0.5, dpoBeta: 0.1, beta: 0.04 });
    expect(algorithmNamed("dgpo").resolve({ use_dpo_loss: false })).toMatchObject({ dpoCoef: 0 });
  });

  it("maps the seed's names onto the real knobs", () => {
    expect(algorithmNamed("grpo").resolve({ kl_estimator: "schulman" }).klEstimator).toBe("k3");
    expect(algorithmNamed("grpo").resolve({ kl_estimator: "mse" }).klEstimator).toBe("k2");
    expect(algorithmNamed("grpo").resolve({ kl_estimator: "abs" }).klEstimator).toBe("abs");
    expect(algorithmNamed("grpo").resolve({ truncated_is: 2 }).importanceSamplingCap).toBe(2);
    expect(algorithmNamed("drgrpo").resolve({ clip_low: 0.1, clip_high: 0.3 })).toMatchObject({ epsilonLow: 0.1, epsilonHigh: 0.3 });
  });

  it("refuses kl_estimator where beta is 0 (no KL term for it to shape), naming both", () => {
    for (const name of ["drgrpo", "dapo", "gspo"]) {
      expect(() => algorithmNamed(name).resolve({ kl_estimator: "k1" })).toThrow(
        /sets kl_estimator but beta is 0.*set beta > 0 or leave kl_estimator out/,
      );
    }
    expect(() => algorithmNamed("grpo").resolve({ kl_estimator: "k2", beta: 0 })).toThrow(/beta is 0/);
    expect(algorithmNamed("dapo").resolve({ kl_estimator: "k1", beta: 0.01 }).klEstimator).toBe("k1");
  });
});

describe("advantages (grpo-math §2.3 test vectors)", () => {
  it("normalises by the group's Bessel std + 1e-4", () => {
    const { advantages } = groupAdvantages([1, 0, 0, 1], ["g", "g", "g", "g"], "group", 1e-4);
    advantages.forEach((a, i) => expect(a).toBeCloseTo([0.865875, -0.865875, -0.865875, 0.865875][i]!, 6));
    const skewed = groupAdvantages([1, 0, 0, 0], ["g", "g", "g", "g"], "group", 1e-4).advantages;
    skewed.forEach((a, i) => expect(a).toBeCloseTo([1.4997, -0.4999, -0.4999, -0.4999][i]!, 4));
  });

  it("flags zero-spread groups and gives groups of one 0", () => {
    const result = groupAdvantages([1, 1, 0, 1, 5], ["a", "a", "b", "b", "c"], "group", 1e-4);
    expect(result.zeroStdGroups).toEqual(["a", "c"]);
    expect(result.advantages[0]).toBe(0);
    expect(result.advantages[4]).toBe(0);
    expect(result.fracRewardZeroStd).toBeCloseTo(2 / 5, 12);
  });
});

describe("KL estimators (grpo-math §5.1)", () => {
  beforeAll(async () => {
    await useBackend("cpu");
  });

  it("k3 at logp −1, ref −1.5 is 0.1065307; k1, k2, abs follow their formulas", () => {
    const logp = tf.tensor2d([[-1]]);
    const ref = tf.tensor2d([[-1.5]]);
    expect(klEstimate(logp, ref, "k3").dataSync()[0]).toBeCloseTo(0.1065307, 6);
    expect(klEstimate(logp, ref, "k1").dataSync()[0]).toBeCloseTo(0.5, 6);
    expect(klEstimate(logp, ref, "k2").dataSync()[0]).toBeCloseTo(0.125, 6);
    expect(klEstimate(ref, logp, "abs").dataSync()[0]).toBeCloseTo(0.5, 6);
    tf.dispose([logp, ref]);
  });
});
