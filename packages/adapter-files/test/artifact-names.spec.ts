import { describe, expect, it } from "vitest";
import { checkpointName, parseCheckpointName } from "../src/index.js";

describe("checkpoint names", () => {
  it("names the checkpoint of step N step-<N> and reads the name back", () => {
    expect(checkpointName(10)).toBe("step-10");
    for (const step of [0, 1, 42, Number.MAX_SAFE_INTEGER]) expect(parseCheckpointName(checkpointName(step))).toBe(step);
  });

  it("reads no step from names checkpointName does not produce", () => {
    for (const name of ["", "step-", "step-01", "step-1.5", "step--1", "policy-v3", "step-3/", "xstep-3", "step-99999999999999999"]) {
      expect(parseCheckpointName(name), name).toBeUndefined();
    }
  });

  it("refuses steps that are not non-negative safe integers", () => {
    for (const step of [-1, 1.5, Number.NaN])
      expect(() => checkpointName(step)).toThrow(/checkpoint step .* is not a non-negative integer/);
  });
});
