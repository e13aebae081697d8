// The presets' reward ranges, from each scorer's bounds: for both task kinds the
// best unsolved completion must stay strictly below the worst solved one.
import { describe, expect, it } from "vitest";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { PRESET_NAMES } from "../src/reward/presets.js";
import { describeBounds, rewardBounds } from "../src/reward/reward-bounds.js";
import { preset } from "./scoring.js";

describe("presets", () => {
  it("are binary, shaped, lenient and strict", () => {
    expect(PRESET_NAMES).toEqual(["binary", "shaped", "lenient", "strict"]);
  });

  const tasks = [TaskKind.LEAN_PROOF, TaskKind.MATH_ANSWER] as const;
  it.each(PRESET_NAMES.flatMap((name) => tasks.map((task) => [name, TaskKind[task], task] as const)))(
    "%s keeps every unsolved %s completion below every solved one",
    (name, _, task) => {
      const bounds = rewardBounds(preset(name), task)!;
      expect(bounds.unsolved[1]).toBeLessThan(bounds.solved[0]);
    },
  );

  it("describe their ranges, computed by hand here for shaped", () => {
    // lean_proof: proved 1, else [0, 0.3]; format ×0.1: [0, 0.1]; length ×0.5: [-0.5, 0].
    // math_answer: right 1, else [-1, -0.5].
    expect(describeBounds(preset("shaped"))).toBe(
      "Lean: proved [0.5, 1.1], not proved [-0.5, 0.4]; math: right [0.5, 1.1], not right [-1.5, -0.4]",
    );
    expect(describeBounds(preset("binary"))).toBe("Lean: proved [1, 1], not proved [0, 0]; math: right [1, 1], not right [0, 0]");
  });
});
