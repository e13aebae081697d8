// efficiency, difficulty and domain: bonuses paid only for solved tasks.
import { describe, expect, it } from "vitest";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { completion, leanAnswer, leanTheorem, mathProblem, proved, verification } from "./messages.js";
import { component, rewardOf, scoreGroup, scoreOne } from "./scoring.js";

describe("efficiency", () => {
  const reward = rewardOf(["lean_proof", 1], ["efficiency", 1, { target_tactics: 2 }]);
  const value = async (v = proved()) =>
    component(await scoreOne(reward, leanTheorem(), completion(leanAnswer("by simp")), v), "efficiency").value;

  it("pays target / tactics for proved proofs, 1 at or under the target", async () => {
    expect(await value(proved(1))).toBe(1);
    expect(await value(proved(2))).toBe(1);
    expect(await value(proved(8))).toBe(0.25);
    expect(await value(proved(0))).toBe(1);
  });
  it("pays nothing unproved, however short", async () => {
    expect(await value(verification(Verdict.ERROR, { total: 1, valid: 0, errors: 1 }))).toBe(0);
  });
  it("drops when a proof is padded with tactics", async () => {
    expect(await value(proved(3))).toBeGreaterThan(await value(proved(13)));
  });
});

describe("difficulty", () => {
  it("pays the dataset difficulty when solved", async () => {
    const reward = rewardOf(["math_answer", 1], ["difficulty", 1]);
    const hard = mathProblem("4", { difficulty: 0.8 });
    expect(component(await scoreOne(reward, hard, completion("\\boxed{4}")), "difficulty").value).toBe(0.8);
    expect(component(await scoreOne(reward, hard, completion("\\boxed{5}")), "difficulty").value).toBe(0);
    expect(component(await scoreOne(reward, mathProblem("4"), completion("\\boxed{4}")), "difficulty").value).toBe(0.5);
  });

  it("pays 1 - the group's pass rate with source pass_rate, and never looks at length", async () => {
    const reward = rewardOf(["math_answer", 1], ["difficulty", 1, { source: "pass_rate" }]);
    const short = completion("\\boxed{4}");
    const long = completion(`${"Let me think again. ".repeat(200)}\\boxed{4}`);
    const results = await scoreGroup(reward, mathProblem("4"), [short, long, completion("\\boxed{3}"), completion("\\boxed{1}")]);
    expect(results.map((r) => component(r, "difficulty").value)).toEqual([0.5, 0.5, 0, 0]);
  });

  it("needs the group for pass_rate and a difficulty in [0, 1]", async () => {
    const groupOnly = rewardOf(["math_answer", 1], ["difficulty", 1, { source: "pass_rate" }]);
    // scoreOne still passes a group of one; the service's Score passes none (see service.spec.ts).
    expect(component(await scoreOne(groupOnly, mathProblem("4"), completion("\\boxed{4}")), "difficulty").value).toBe(0);
    const reward = rewardOf(["math_answer", 1], ["difficulty", 1]);
    await expect(scoreOne(reward, mathProblem("4", { difficulty: 1.5 }), completion("\\boxed{4}"))).rejects.toThrow(
      "theorem.difficulty is 1.5; accepted: a number in [0, 1], or unset",
    );
  });
});

describe("domain", () => {
  const reward = rewardOf(["lean_proof", 1], ["domain", 1, { number_theory: 0.5 }]);
  const theorem = leanTheorem({ domain: "Number Theory" });
  const value = async (proof: string, v = proved()) =>
    component(await scoreOne(reward, theorem, completion(leanAnswer(proof)), v), "domain");

  it("pays the domain's bonus when a proved proof uses its tools", async () => {
    expect(await value("by\n  omega")).toMatchObject({ value: 0.5, detail: "number_theory proof uses omega" });
    expect((await value("by\n  exact Nat.Prime.two_le hp")).value).toBe(0.5);
  });

  it("pays nothing for tools in comments, strings or under try/first/<|>", async () => {
    expect((await value("by\n  -- omega decide Nat.Prime\n  simp")).value).toBe(0);
    expect((await value("by\n  /- omega\n  /- nested: decide -/ -/\n  simp")).value).toBe(0);
    expect((await value('by\n  simp [show "omega" = "omega" from rfl]')).value).toBe(0);
    expect((await value("by\n  try omega\n  simp")).value).toBe(0);
    expect((await value("by\n  first | omega | simp")).value).toBe(0);
    expect((await value("by\n  simp <|> omega")).value).toBe(0);
    expect((await value("by\n  try\n    omega\n  simp")).value).toBe(0);
  });

  it("pays nothing unproved, and nothing more for repeated tools", async () => {
    expect((await value("by\n  omega", verification(Verdict.ERROR, { total: 1, errors: 1 }))).value).toBe(0);
    expect((await value("by\n  omega\n  omega\n  decide\n  omega")).value).toBe(0.5);
  });

  it("reads aliases and ignores other tags", async () => {
    const score = async (tag: string) =>
      component(await scoreOne(reward, leanTheorem({ domain: tag }), completion(leanAnswer("by ring")), proved()), "domain");
    expect((await score("algebra")).value).toBe(1);
    expect((await score("nt")).value).toBe(0);
    expect(await score("topology")).toMatchObject({ value: 0, detail: 'no tools listed for domain "topology"' });
  });
});
