import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { LeanMessageSchema, Severity, Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { completion, leanAnswer, leanTheorem, proved, verification, type ProgressInit } from "./messages.js";
import { component, rewardOf, scoreOne } from "./scoring.js";

const shaped = rewardOf(["lean_proof", 1, { mode: "shaped", max_partial: 0.3 }]);
const binary = rewardOf(["lean_proof", 1, { mode: "binary" }]);
const attempt = completion(leanAnswer("by\n  simp"));

async function shapedValue(verdict: Verdict, progress: ProgressInit): Promise<number> {
  return component(await scoreOne(shaped, leanTheorem(), attempt, verification(verdict, progress)), "lean_proof").value;
}

describe("lean_proof binary", () => {
  it("pays 1 for PROVED and 0 for every other verdict", async () => {
    expect((await scoreOne(binary, leanTheorem(), attempt, proved(3))).reward).toBe(1);
    for (const verdict of [Verdict.INCOMPLETE, Verdict.ERROR, Verdict.TIMEOUT, Verdict.REJECTED, Verdict.CRASHED]) {
      const result = await scoreOne(
        binary,
        leanTheorem(),
        attempt,
        verification(verdict, { total: 5, valid: 4, goals: 1, errors: 1 }, "why"),
      );
      expect(result.reward, Verdict[verdict]).toBe(0);
      expect(result.solved).toBe(false);
      expect(component(result, "lean_proof").detail).toBe(`${Verdict[verdict]}: why`);
    }
  });
});

describe("lean_proof shaped", () => {
  it("gives max_partial divided by goals left, the failed tail and the errors", async () => {
    // One goal left, nothing failed: 0.3. Two goals: 0.15. An error at the last of 5 tactics: 0.3.
    expect(await shapedValue(Verdict.INCOMPLETE, { total: 4, valid: 4, goals: 1, errors: 1 })).toBeCloseTo(0.3, 12);
    expect(await shapedValue(Verdict.INCOMPLETE, { total: 4, valid: 4, goals: 2, errors: 1 })).toBeCloseTo(0.15, 12);
    expect(await shapedValue(Verdict.ERROR, { total: 5, valid: 4, goals: 0, errors: 1 })).toBeCloseTo(0.3, 12);
    // An error after 1 of 5 tactics leaves 4 from the first error on: 0.075. Two errors halve it again.
    expect(await shapedValue(Verdict.ERROR, { total: 5, valid: 1, goals: 0, errors: 1 })).toBeCloseTo(0.075, 12);
    expect(await shapedValue(Verdict.ERROR, { total: 5, valid: 1, goals: 0, errors: 2 })).toBeCloseTo(0.0375, 12);
  });

  it("gives nothing for a sorry the REPL did not list: Lean's warning or sorryAx among the axioms", async () => {
    const noListedSorry = verification(Verdict.INCOMPLETE, { total: 2, valid: 2, goals: 1, errors: 0 }, "the proof contains sorry");
    expect(component(await scoreOne(shaped, leanTheorem(), attempt, noListedSorry), "lean_proof").value).toBeGreaterThan(0);
    const warned = verification(Verdict.INCOMPLETE, { total: 2, valid: 2, goals: 1, errors: 0 }, "the proof contains sorry");
    warned.messages.push(create(LeanMessageSchema, { severity: Severity.WARNING, data: "declaration uses `sorry`" }));
    expect(component(await scoreOne(shaped, leanTheorem(), attempt, warned), "lean_proof").value).toBe(0);
    const viaAxiom = verification(Verdict.INCOMPLETE, { total: 2, valid: 2, goals: 1, errors: 0 }, "the theorem depends on sorryAx");
    viaAxiom.axioms.push("propext", "sorryAx");
    expect(component(await scoreOne(shaped, leanTheorem(), attempt, viaAxiom), "lean_proof").value).toBe(0);
  });

  it("credits more valid tactics, for the same proof length, and fewer goals left", async () => {
    const early = await shapedValue(Verdict.ERROR, { total: 6, valid: 1, errors: 1 });
    const late = await shapedValue(Verdict.ERROR, { total: 6, valid: 5, errors: 1 });
    expect(late).toBeGreaterThan(early);
    const manyGoals = await shapedValue(Verdict.INCOMPLETE, { total: 3, valid: 3, goals: 3, errors: 1 });
    const fewGoals = await shapedValue(Verdict.INCOMPLETE, { total: 3, valid: 3, goals: 1, errors: 1 });
    expect(fewGoals).toBeGreaterThan(manyGoals);
  });

  it("is never raised by padding with no-op tactics, before or after the first error", async () => {
    // Padding adds k tactics that elaborate: before the error they raise both
    // tactics_total and tactics_valid_before_first_error; after it, only the total.
    for (let total = 0; total <= 6; total++) {
      for (let valid = 0; valid <= total; valid++) {
        for (const verdict of [Verdict.ERROR, Verdict.INCOMPLETE]) {
          for (const goals of [0, 1, 3]) {
            const base = await shapedValue(verdict, { total, valid, goals, errors: 1 });
            for (const k of [1, 5, 50]) {
              const before = await shapedValue(verdict, { total: total + k, valid: valid + k, goals, errors: 1 });
              const after = await shapedValue(verdict, { total: total + k, valid, goals, errors: 1 });
              expect(before, `${Verdict[verdict]} ${valid}/${total} +${k} before`).toBeLessThanOrEqual(base);
              expect(after, `${Verdict[verdict]} ${valid}/${total} +${k} after`).toBeLessThanOrEqual(base);
            }
          }
        }
      }
    }
  });

  it("stays strictly below a proof for every verdict and signal", async () => {
    const reward = rewardOf(["lean_proof", 1, { mode: "shaped", max_partial: 0.999 }]);
    const proof = (await scoreOne(reward, leanTheorem(), attempt, proved(50))).reward;
    for (const verdict of [Verdict.INCOMPLETE, Verdict.ERROR, Verdict.TIMEOUT, Verdict.REJECTED, Verdict.CRASHED]) {
      for (const progress of [{}, { total: 1, valid: 1 }, { total: 9, valid: 9, goals: 0, errors: 0 }]) {
        const result = await scoreOne(reward, leanTheorem(), attempt, verification(verdict, progress));
        expect(result.reward).toBeLessThan(proof);
      }
    }
  });

  it("gives nothing for sorry, REJECTED, TIMEOUT or CRASHED", async () => {
    expect(await shapedValue(Verdict.INCOMPLETE, { total: 3, valid: 3, sorries: 1 })).toBe(0);
    for (const verdict of [Verdict.REJECTED, Verdict.TIMEOUT, Verdict.CRASHED]) {
      expect(await shapedValue(verdict, { total: 3, valid: 3, goals: 1, errors: 1 })).toBe(0);
    }
  });

  it("rejects max_partial of 1 or more", () => {
    expect(() => rewardOf(["lean_proof", 1, { mode: "shaped", max_partial: 1 }])).toThrow(
      "scorers[0].params.max_partial: 1 is not accepted; expected a number in [0, 1)",
    );
  });

  it("gives 0 when the completion holds no proof, without a verification", async () => {
    const result = await scoreOne(shaped, leanTheorem(), completion("<think>I am not sure how to start"));
    expect(component(result, "lean_proof")).toMatchObject({ value: 0, detail: "no proof found in the completion" });
    expect(result.verification).toBeUndefined();
  });
});

describe("lean_proof and the verifier's tiers", () => {
  it("names the tier that decided, and gives no partial credit for what the kernel replay decided against", async () => {
    const replayed = { ...proved(3), decidedBy: VerdictTier.REPLAY };
    const accepted = await scoreOne(binary, leanTheorem(), attempt, replayed);
    expect(component(accepted, "lean_proof")).toMatchObject({ value: 1, detail: "proved (decided by replay)" });
    // A replay that could not check (ERROR) or that refused (REJECTED): the REPL's progress signals do not count.
    for (const verdict of [Verdict.ERROR, Verdict.REJECTED]) {
      const refused = {
        ...verification(verdict, { total: 5, valid: 5, goals: 0, errors: 0 }, "replay says no"),
        decidedBy: VerdictTier.REPLAY,
      };
      const result = await scoreOne(shaped, leanTheorem(), attempt, refused);
      expect(component(result, "lean_proof"), Verdict[verdict]).toMatchObject({
        value: 0,
        detail: `${Verdict[verdict]} (decided by replay): no partial credit`,
      });
    }
    const byRepl = { ...verification(Verdict.INCOMPLETE, { total: 4, valid: 4, goals: 1, errors: 1 }), decidedBy: VerdictTier.REPL };
    expect(component(await scoreOne(shaped, leanTheorem(), attempt, byRepl), "lean_proof").value).toBeCloseTo(0.3, 12);
  });
});
