import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { groupStats } from "../src/reward/group-stats.js";

interface GroupCase {
  rewards: number[];
  solved: boolean[];
  mean: number;
  std: number;
  pass_rate: number;
}

// Computed by fixtures/make_fixtures.py with Python's statistics.fmean and statistics.stdev.
const reference: GroupCase[] = JSON.parse(readFileSync(new URL("./fixtures/group-stats.json", import.meta.url), "utf8"));

describe("groupStats", () => {
  it.each(reference.map((c, i) => [i, c] as const))("matches the reference group %i", (_, c) => {
    const stats = groupStats(c.rewards, c.solved);
    expect(stats.mean).toBeCloseTo(c.mean, 12);
    expect(stats.std).toBeCloseTo(c.std, 12);
    expect(stats.passRate).toBe(c.pass_rate);
  });
});
