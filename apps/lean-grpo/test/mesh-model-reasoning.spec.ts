// The mesh's `model:` reasoning keys (docs/concepts/reasoning-vocabulary.md): checked when the
// file is read (each error names the key), and handed to the services that hold the model.
import { describe, expect, it } from "vitest";
import { InferenceConfigSchema } from "@lean-grpo/inference";
import { LearnerConfigSchema } from "@lean-grpo/learner";
import { applyMeshModel, MeshModelSchema, reasoningKeys } from "../src/mesh/mesh-model.js";

const issues = (value: unknown) => {
  const parsed = MeshModelSchema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
};

describe("model.reasoning_* keys", () => {
  it("default to off and accept a vocabulary", () => {
    expect(MeshModelSchema.parse({})).toMatchObject({
      reasoning_vocab_size: 0,
      reasoning_markers: ["<think>", "</think>"],
      reasoning_mask: "free",
    });
    expect(issues({ reasoning_vocab_size: 147, reasoning_markers: [":", "\\boxed{"], reasoning_mask: "strict" })).toEqual([]);
  });

  it("refuse what can never work, naming the key", () => {
    expect(issues({ reasoning_mask: "gated" }).join("\n")).toMatch(/model\.reasoning_mask "gated" needs a reasoning vocabulary/);
    expect(issues({ reasoning_vocab_size: 4, reasoning_markers: ["x", "x"] }).join("\n")).toMatch(
      /model\.reasoning_markers: start and end are both "x"/,
    );
    expect(issues({ reasoning_vocab_size: 4, reasoning_markers: ["", "x"] }).join("\n")).toMatch(/model\.reasoning_markers\[0\] is empty/);
    expect(issues({ reasoning_vocab_size: -1 }).length).toBeGreaterThan(0);
    expect(issues({ reasoning_vocab_size: 4, reasoning_mask: "open" }).length).toBeGreaterThan(0);
  });

  it("are given to the inference service and the learner where their own sections leave them unset", () => {
    const model = MeshModelSchema.parse({ reasoning_vocab_size: 147, reasoning_markers: [":", "\\boxed{"], reasoning_mask: "gated" });
    const inference = InferenceConfigSchema.parse({});
    const learner = LearnerConfigSchema.parse({});
    applyMeshModel(model, inference, learner);
    for (const section of [inference.model, learner.model]) expect(section).toMatchObject(reasoningKeys(model));
    // A section that sets its own vocabulary keeps it.
    const own = LearnerConfigSchema.parse({ model: { reasoning_vocab_size: 20 } });
    applyMeshModel(model, undefined, own);
    expect(own.model.reasoning_vocab_size).toBe(20);
  });
});
