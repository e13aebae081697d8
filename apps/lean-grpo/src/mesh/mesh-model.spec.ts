import { describe, expect, it } from "vitest";
import { InferenceConfigSchema } from "@lean-grpo/inference";
import { LearnerConfigSchema } from "@lean-grpo/learner";
import { applyMeshModel, MeshModelSchema } from "./mesh-model.js";

const model = MeshModelSchema.parse({});

describe("the mesh's model", () => {
  it("defaults to the shipped model and reaches the embedded sampler and the learner", () => {
    const inference = InferenceConfigSchema.parse({});
    const learner = LearnerConfigSchema.parse({});
    expect(applyMeshModel(model, inference, learner)).toEqual(["inference", "learner"]);
    expect(inference.embedded.model_dir).toBe("models/arith-tiny");
    expect(learner.model.dir).toBe("models/arith-tiny");
  });

  it("leaves a service's own model and a vLLM-backed sampler alone", () => {
    const inference = InferenceConfigSchema.parse({ vllm: { url: "http://127.0.0.1:8000" } });
    const learner = LearnerConfigSchema.parse({ model: { dir: "models/other" } });
    expect(applyMeshModel(model, inference, learner)).toEqual([]);
    expect(inference.embedded.model_dir).toBeUndefined();
    expect(learner.model.dir).toBe("models/other");
  });

  it("refuses keys it does not know, naming them", () => {
    expect(() => MeshModelSchema.parse({ path: "x" })).toThrow(/path/);
  });
});
