// "auto" dynamic sampling follows the learner's own description of the algorithm
// (ListAlgorithms), not a list of names kept here.
import { create } from "@bufbuild/protobuf";
import { AlgorithmInfoSchema } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { describe, expect, it } from "vitest";
import { describeAlgorithm, usesDynamicSampling } from "../src/run/config/learner-algorithm.js";
import type { MeshClients } from "../src/run/mesh-clients.js";
import { RunConfigSchema } from "../src/run/config/run-config.js";

const knob = (defaultValue: string) => ({ name: "dynamic_sampling", type: "boolean", defaultValue, description: "", allowedValues: [] });
const dapo = create(AlgorithmInfoSchema, { name: "dapo", params: [knob("true")] });
const grpo = create(AlgorithmInfoSchema, { name: "grpo", params: [{ name: "beta", type: "number", defaultValue: "0.04" }] });
const offByDefault = create(AlgorithmInfoSchema, { name: "custom", params: [knob("false")] });

const run = (algorithm: string, config: Record<string, unknown> = {}, setting?: boolean) =>
  RunConfigSchema.parse({ algorithm: { name: algorithm, config }, training: setting === undefined ? {} : { dynamic_sampling: setting } });

describe("usesDynamicSampling", () => {
  it("auto: on where the algorithm's knob defaults on, off where it has none or defaults off", () => {
    expect(usesDynamicSampling(run("dapo"), dapo)).toBe(true);
    expect(usesDynamicSampling(run("grpo"), grpo)).toBe(false);
    expect(usesDynamicSampling(run("custom"), offByDefault)).toBe(false);
  });

  it("auto: algorithm.config's dynamic_sampling wins over the default", () => {
    expect(usesDynamicSampling(run("dapo", { dynamic_sampling: false }), dapo)).toBe(false);
    expect(usesDynamicSampling(run("custom", { dynamic_sampling: true }), offByDefault)).toBe(true);
  });

  it("an explicit training.dynamic_sampling decides whatever the algorithm says", () => {
    expect(usesDynamicSampling(run("grpo", {}, true), grpo)).toBe(true);
    expect(usesDynamicSampling(run("dapo", {}, false), dapo)).toBe(false);
  });
});

describe("describeAlgorithm", () => {
  /** The part of the mesh describeAlgorithm calls: a learner that lists these algorithms. */
  const learnerListing = (...algorithms: (typeof grpo)[]) =>
    ({
      learner: { listAlgorithms: async () => ({ algorithms }) },
      withRetry: <T>(_service: string, call: () => Promise<T>) => call(),
    }) as unknown as MeshClients;

  it("finds the algorithm by its name in any case, as the learner spells it", async () => {
    const found = await describeAlgorithm(learnerListing(grpo, dapo), run("DAPO"));
    expect(found.name).toBe("dapo");
    expect((await describeAlgorithm(learnerListing(grpo, dapo), run(" Grpo "))).name).toBe("grpo");
  });

  it("refuses a name the learner does not have, listing what it has", async () => {
    await expect(describeAlgorithm(learnerListing(grpo, dapo), run("gspo"))).rejects.toThrow(
      'algorithm.name: the learner has no algorithm "gspo"; it has: grpo, dapo',
    );
  });
});
