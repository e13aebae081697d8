// Outcome advantages, one per completion (grpo-math §2.2, §15.2): r − mean of its group,
// divided by (Bessel std + ε) of the group or of the whole batch, or not at all. A group of
// one has no std (NaN) and its completion gets 0, as TRL's nan_to_num does.
// With advantage_estimator = passk the centred reward is the pass@k one (pass-at-k.ts).
import { AlgorithmConfigError } from "./algorithm-config-error.js";
import type { AdvantageEstimator, ScaleRewards } from "./loss-settings.js";
import { passAtKAdvantages } from "./pass-at-k.js";

export interface GroupAdvantages {
  advantages: number[];
  /** Groups whose rewards are all equal (including groups of one): no policy-gradient signal. */
  zeroStdGroups: string[];
  /** Fraction of completions whose group std is 0 (TRL's frac_reward_zero_std). */
  fracRewardZeroStd: number;
}

function mean(values: readonly number[]): number {
  return values.reduce((s, v) => s + v, 0) / Math.max(1, values.length);
}

/** Bessel-corrected standard deviation; NaN for fewer than two values. */
export function besselStd(values: readonly number[]): number {
  if (values.length < 2) return Number.NaN;
  const m = mean(values);
  return Math.sqrt(values.reduce((s, v) => s + (v - m) ** 2, 0) / (values.length - 1));
}

export function groupAdvantages(
  rewards: readonly number[],
  groupIds: readonly string[],
  scale: ScaleRewards,
  epsilon: number,
  estimator: AdvantageEstimator = { kind: "grpo" },
): GroupAdvantages {
  const members = new Map<string, number[]>();
  groupIds.forEach((g, i) => {
    const list = members.get(g);
    if (list) list.push(i);
    else members.set(g, [i]);
  });
  const batchStd = besselStd(rewards);
  const advantages = new Array<number>(rewards.length).fill(0);
  const zeroStdGroups: string[] = [];
  let zeroStdSamples = 0;
  for (const [group, indices] of members) {
    const values = indices.map((i) => rewards[i]!);
    const groupMean = mean(values);
    const groupStd = besselStd(values);
    if (Math.max(...values) === Math.min(...values)) zeroStdGroups.push(group);
    if (groupStd === 0) zeroStdSamples += indices.length;
    const centred = estimator.kind === "passk" ? passAtKAdvantages(values, passK(estimator.k, group, values.length)) : null;
    indices.forEach((i, position) => {
      let a = centred ? centred[position]! : rewards[i]! - groupMean;
      if (scale === "group") a /= groupStd + epsilon;
      else if (scale === "batch") a /= batchStd + epsilon;
      advantages[i] = Number.isFinite(a) ? a : 0;
    });
  }
  return { advantages, zeroStdGroups, fracRewardZeroStd: zeroStdSamples / Math.max(1, rewards.length) };
}

/** k of pass@k for a group: the knob's, or the group's size (verl's grpo_passk); at most the group's size. */
function passK(k: number | null, group: string, size: number): number {
  const chosen = k ?? size;
  if (chosen > size || chosen < 2) {
    throw new AlgorithmConfigError(
      `algorithm_config.pass_k = ${k ?? "null (the group size)"} does not fit group "${group}" of ${size} completions; accepted: 2 <= pass_k <= the group size`,
    );
  }
  return chosen;
}
