// The one reading of a request's sampling settings: the SamplingDistribution message and the
// older single temperatures (algorithm_config.temperature, ComputeLogprobsRequest.temperature).
// Temperature 0 is greedy decoding, as for the sampler, scored under the full T = 1 distribution.
import { describe, expect, it } from "vitest";
import { resolveSampling } from "../src/training/step-sampling.js";

const FULL = { temperature: 1, topK: 0, topP: 1 };

describe("resolveSampling", () => {
  it("reads the message, top_p 0 as unset (no truncation)", () => {
    expect(resolveSampling({ temperature: 0.7, topK: 20, topP: 0.9 }, undefined, "sampling")).toEqual({
      temperature: 0.7,
      topK: 20,
      topP: 0.9,
    });
    expect(resolveSampling({ temperature: 0.7, topK: 0, topP: 0 }, undefined, "sampling")).toEqual({ temperature: 0.7, topK: 0, topP: 1 });
  });

  it("scores greedy decoding (temperature 0) under the untruncated temperature-1 distribution, whatever top_k and top_p say", () => {
    expect(resolveSampling({ temperature: 0, topK: 0, topP: 0 }, undefined, "header.sampling")).toEqual(FULL);
    expect(resolveSampling({ temperature: 0, topK: 5, topP: 0.5 }, undefined, "header.sampling")).toEqual(FULL);
  });

  it("takes an older temperature when the message is absent, and temperature 1 when neither is given", () => {
    expect(resolveSampling(undefined, undefined, "sampling")).toEqual(FULL);
    expect(resolveSampling(undefined, { temperature: 0.7, field: "temperature" }, "sampling")).toEqual({ ...FULL, temperature: 0.7 });
  });

  it("accepts an older temperature that agrees with the message (float32 rounding included)", () => {
    expect(
      resolveSampling({ temperature: Math.fround(0.7), topK: 0, topP: 1 }, { temperature: 0.7, field: "temperature" }, "sampling"),
    ).toEqual({
      temperature: Math.fround(0.7),
      topK: 0,
      topP: 1,
    });
    expect(
      resolveSampling({ temperature: 0, topK: 0, topP: 0 }, { temperature: 1, field: "algorithm_config.temperature" }, "header.sampling"),
    ).toEqual(FULL);
  });

  it("refuses an older temperature that disagrees, naming both fields", () => {
    expect(() => resolveSampling({ temperature: 0.7, topK: 0, topP: 1 }, { temperature: 0.8, field: "temperature" }, "sampling")).toThrow(
      /temperature is 0\.8 but sampling\.temperature is 0\.7/,
    );
    expect(() =>
      resolveSampling({ temperature: 0, topK: 0, topP: 0 }, { temperature: 0.7, field: "algorithm_config.temperature" }, "header.sampling"),
    ).toThrow(
      /algorithm_config\.temperature is 0\.7 but header\.sampling\.temperature is 0 \(greedy decoding, scored under temperature 1\)/,
    );
  });

  it("refuses values out of range, naming the field and what it accepts", () => {
    expect(() => resolveSampling({ temperature: -1, topK: 0, topP: 1 }, undefined, "sampling")).toThrow(
      "sampling.temperature is -1; accepted: a number >= 0 (0 is greedy decoding)",
    );
    expect(() => resolveSampling({ temperature: 1, topK: 0, topP: 1.5 }, undefined, "sampling")).toThrow(
      /sampling\.top_p is 1\.5; accepted: \(0, 1\]/,
    );
    expect(() => resolveSampling({ temperature: 1, topK: 1.5, topP: 1 }, undefined, "sampling")).toThrow(/sampling\.top_k is 1\.5/);
  });
});
