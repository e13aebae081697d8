// The pass@k advantage's closed form (pass-at-k.ts) against its definition, by brute force
// over every k-subset: member i of S gets max S − max S∖{i}, averaged over the C(n, k) subsets.
import { describe, expect, it } from "vitest";
import { passAtKAdvantages } from "../src/algorithms/pass-at-k.js";

function subsets(n: number, k: number): number[][] {
  if (k === 0) return [[]];
  if (n < k) return [];
  return [...subsets(n - 1, k - 1).map((s) => [...s, n - 1]), ...subsets(n - 1, k)];
}

function byDefinition(rewards: readonly number[], k: number): number[] {
  const all = subsets(rewards.length, k);
  const total = rewards.map(() => 0);
  for (const s of all) {
    const best = Math.max(...s.map((j) => rewards[j]!));
    for (const i of s) total[i]! += best - Math.max(...s.filter((j) => j !== i).map((j) => rewards[j]!));
  }
  return total.map((t) => t / all.length);
}

describe("pass@k advantage", () => {
  it("is verl's grpo_passk at k = n: r_max − r_second for the best, 0 for the others (ties at the top: all 0)", () => {
    expect(passAtKAdvantages([0.2, 0.9, 0.5, 0.1], 4)).toEqual([0, 0.9 - 0.5, 0, 0]);
    expect(passAtKAdvantages([1, 0, 1, 0], 4)).toEqual([0, 0, 0, 0]);
  });

  it("equals its definition for every k, binary and graded rewards, with ties", () => {
    const groups = [
      [1, 0, 0, 1, 0, 0, 0, 1],
      [0.5, 0.25, 0, 0.25, 1, 0.75],
      [0.3, 0.3, 0.3, 0.1, 0.9, 0.9, 0.2, 0.6, 0.0, 0.45],
    ];
    for (const rewards of groups) {
      for (let k = 2; k <= rewards.length; k++) {
        const got = passAtKAdvantages(rewards, k);
        byDefinition(rewards, k).forEach((want, i) => expect(got[i], `k=${k} i=${i} of [${rewards}]`).toBeCloseTo(want, 12));
      }
    }
  });
});
