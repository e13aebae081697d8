import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { TheoremSchema } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { RewardResultSchema } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { countTheoremErrors, theoremErrorWarning } from "./theorem-errors.js";

const verified = (theoremError = "") => create(RewardResultSchema, { verification: { verdict: Verdict.ERROR, theoremError } });

describe("theorem errors", () => {
  it("counts the completions whose verification blamed the theorem, keeping Lean's first error", () => {
    const errors = countTheoremErrors([verified(), verified("1:20: unknown identifier 'Nat.Prime'"), verified("1:20: other")]);
    expect(errors).toEqual({ count: 2, first: "1:20: unknown identifier 'Nat.Prime'" });
    expect(countTheoremErrors([verified(), verified()])).toEqual({ count: 0 });
    // A math group has no verification at all: no count, so the step reports none.
    expect(countTheoremErrors([create(RewardResultSchema, {})])).toBeUndefined();
  });

  it("warns naming the theorem, its header and Lean's error, and points at dataset.header", () => {
    const theorem = create(TheoremSchema, { id: "mathd_1", header: "import Init\n\nopen Nat" });
    const warning = theoremErrorWarning(theorem, { count: 8, first: "1:20: unknown identifier 'Nat.Prime'" });
    expect(warning).toBe(
      "theorem mathd_1 does not elaborate under its header (import Init open Nat): 1:20: unknown identifier 'Nat.Prime'; " +
        "8 proof(s) of it scored as failures no proof could avoid. " +
        "Set dataset.header (or the dataset's header field) to the imports its statements need, or fix the record",
    );
    const bare = theoremErrorWarning(create(TheoremSchema, { id: "t" }), { count: 1, first: "1:9: unknown identifier 'ℝ'" });
    expect(bare).toContain("under the verifier's default header (the record has none)");
    expect(theoremErrorWarning(create(TheoremSchema, { id: "t", imports: ["Mathlib"] }), { count: 1, first: "x" })).toContain(
      "under its imports (Mathlib)",
    );
    expect(theoremErrorWarning(theorem, { count: 0 })).toBeUndefined();
    expect(theoremErrorWarning(theorem, undefined)).toBeUndefined();
  });
});
