// The pass@k estimator against exact rational reference values (fixtures/pass-at-k.py).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkPassAtKs, passAtK } from "../src/eval/pass-at-k.js";

const here = path.dirname(fileURLToPath(import.meta.url));

describe("passAtK", () => {
  it("matches exact rational 1 − C(n−c,k)/C(n,k) from Python (test/fixtures/pass-at-k.py)", async () => {
    const fixture = JSON.parse(await readFile(path.join(here, "fixtures/pass-at-k.json"), "utf8")) as {
      cases: { n: number; c: number; k: number; pass_at_k: number }[];
    };
    expect(fixture.cases.length).toBeGreaterThan(40);
    // Cases where C(n, k) overflows float64: a binomial formula would give NaN there.
    expect(fixture.cases.some(({ n, k }) => n === 2000 && k === 1000)).toBe(true);
    for (const { n, c, k, pass_at_k } of fixture.cases) expect(passAtK(n, c, k)).toBeCloseTo(pass_at_k, 12);
  });

  it("refuses k > n, c > n and non-integers, naming the bounds", () => {
    expect(() => passAtK(3, 1, 4)).toThrow(/1 ≤ k ≤ n and 0 ≤ c ≤ n, got n=3 c=1 k=4/);
    expect(() => passAtK(3, 4, 1)).toThrow(/got n=3 c=4 k=1/);
    expect(() => passAtK(3, 1.5, 1)).toThrow(RangeError);
  });

  it("takes several k from one set of samples: ascending, without repeats, each ≤ samples", () => {
    expect(checkPassAtKs([32, 1, 8, 8], 32)).toEqual([1, 8, 32]);
    expect(() => checkPassAtKs([1, 8, 32], 16)).toThrow(
      "k 32 is larger than samples 16: pass@k needs at least k completions per problem; raise samples to 32 or more",
    );
    expect(() => checkPassAtKs([], 4)).toThrow("give at least one k");
    expect(() => checkPassAtKs([0], 4)).toThrow("k must be a positive integer, got 0");
  });
});
