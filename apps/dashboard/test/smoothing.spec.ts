// EMA smoothing (TensorBoard's debiased form, checked against values worked by hand) and
// the alignment of runs with different steps on one x axis.
import { describe, expect, it } from "vitest";
import { alignSeries, smooth } from "../src/browser/smoothing.js";

describe("smooth", () => {
  it("debiases the first points and keeps gaps", () => {
    // w = 0.5: ema 0.5*0+0.5*2 = 1 → /(1-0.5) = 2; then 0.5*1+0.5*4 = 2.5 → /(1-0.25) = 3.333…
    const out = smooth([2, null, 4], 0.5);
    expect(out[0]).toBeCloseTo(2, 12);
    expect(out[1]).toBeNull();
    expect(out[2]).toBeCloseTo(10 / 3, 12);
  });
  it("leaves the curve alone at 0 and refuses a weight outside [0, 1)", () => {
    expect(smooth([1, 5, 2], 0)).toEqual([1, 5, 2]);
    expect(() => smooth([1], 1)).toThrow(/\[0, 1\)/);
  });
});

describe("alignSeries", () => {
  it("puts runs on the union of their steps with nulls where a run has none", () => {
    expect(
      alignSeries([
        [
          [1, 2, 3],
          [0.1, 0.2, 0.3],
        ],
        [
          [2, 4],
          [1, 2],
        ],
      ]),
    ).toEqual([
      [1, 2, 3, 4],
      [0.1, 0.2, 0.3, null],
      [null, 1, null, 2],
    ]);
  });
});
