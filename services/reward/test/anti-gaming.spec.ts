// Reward hacking, tried on every preset: junk and padded proofs, keyword
// stuffing in comments, empty completions, and a seeded search over completion
// shapes and verifier signals for any unsolved completion that reaches a solved
// one's reward.
import { describe, expect, it } from "vitest";
import { FinishReason, type Completion, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Verdict, type VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { PRESET_NAMES } from "../src/reward/presets.js";
import { completion, leanAnswer, leanTheorem, mathProblem, proved, verification } from "./messages.js";
import { preset, scoreGroup, scoreOne } from "./scoring.js";
import { SeededRandom } from "@lean-grpo/random";

const theorem = leanTheorem({ domain: "algebra", difficulty: 0.7 });
const correctProof = completion(leanAnswer("by\n  simp"));

interface Attempt {
  label: string;
  completion: Completion;
  verification?: VerifyResponse;
}

/** What a policy might try instead of proving: each with the verdict the verifier would give it. */
const junk: Attempt[] = [
  {
    label: "prose",
    completion: completion("I believe this is true by algebra."),
    verification: verification(Verdict.ERROR, { errors: 1 }),
  },
  {
    label: "keyword-stuffed comments",
    completion: completion(leanAnswer(`by\n  -- ${"ring linarith nlinarith omega simp field_simp Nat.Prime Finset ".repeat(20)}\n  skip`)),
    verification: verification(Verdict.INCOMPLETE, { total: 1, valid: 1, goals: 1, errors: 1 }),
  },
  {
    label: "100 no-op tactics then a failing one",
    completion: completion(leanAnswer(`by\n${"  skip\n".repeat(100)}  linarith`)),
    verification: verification(Verdict.ERROR, { total: 101, valid: 100, goals: 0, errors: 1 }),
  },
  {
    label: "padding that leaves the goal",
    completion: completion(leanAnswer(`by\n${"  try simp\n".repeat(200)}`)),
    verification: verification(Verdict.INCOMPLETE, { total: 200, valid: 200, goals: 1, errors: 1 }),
  },
  {
    label: "sorry",
    completion: completion(leanAnswer("by sorry")),
    verification: verification(Verdict.INCOMPLETE, { total: 1, valid: 1, sorries: 1 }),
  },
  {
    label: "banned native_decide",
    completion: completion(leanAnswer("by native_decide")),
    verification: verification(Verdict.REJECTED, {}, "banned"),
  },
  { label: "runaway", completion: completion(leanAnswer("by\n  decide")), verification: verification(Verdict.TIMEOUT) },
  {
    label: "truncated junk",
    completion: completion(`<think>${"hmm ".repeat(1500)}`, { finishReason: FinishReason.LENGTH }),
  },
  { label: "empty", completion: completion("") },
  { label: "whitespace", completion: completion(" \n\t ") },
  { label: "empty, with a PROVED verification of something else", completion: completion(""), verification: proved() },
];

/** Correct proofs at their worst: no format, long, many tactics, truncated. */
const worstCorrect: Attempt[] = [
  { label: "bare correct proof", completion: completion("by simp"), verification: proved(1) },
  {
    label: "long correct proof",
    completion: completion(leanAnswer(`by\n${"  simp only []\n".repeat(280)}  simp`)),
    verification: proved(281),
  },
  {
    label: "correct but cut off",
    completion: completion(`by simp ${"x".repeat(5000)}`, { finishReason: FinishReason.LENGTH }),
    verification: proved(1),
  },
];

async function rewardOf(name: string, attempt: Attempt, on: Theorem = theorem): Promise<number> {
  return (await scoreOne(preset(name), on, attempt.completion, attempt.verification)).reward;
}

describe.each(PRESET_NAMES)("preset %s", (name) => {
  it("never lets junk or padding reach a correct proof, even a correct proof at its worst", async () => {
    const best = Math.max(...(await Promise.all(junk.map((a) => rewardOf(name, a)))));
    const worst = Math.min(
      ...(await Promise.all(
        [...worstCorrect, { label: "clean", completion: correctProof, verification: proved() }].map((a) => rewardOf(name, a)),
      )),
    );
    expect(best).toBeLessThan(worst);
  });

  it("gives an empty completion the minimum reward", async () => {
    const empty = await rewardOf(name, { label: "empty", completion: completion("") });
    const all = await Promise.all([...junk, ...worstCorrect].map((a) => rewardOf(name, a)));
    expect(Math.min(...all)).toBe(empty);
    const emptyMath = await rewardOf(name, { label: "empty", completion: completion("") }, mathProblem("4"));
    const mathAttempts = ["\\boxed{5}", "no idea", "\\boxed{}", `${"x".repeat(6000)}\\boxed{4}`].map((text) => completion(text));
    for (const c of mathAttempts)
      expect(await rewardOf(name, { label: "", completion: c }, mathProblem("4"))).toBeGreaterThanOrEqual(emptyMath);
  });

  it("pays nothing for keywords in comments", async () => {
    // The same token count for both, so that only the comment's words differ.
    const tokens = { tokenIds: Array.from({ length: 64 }, (_, i) => i) };
    const keywords = "-- ring omega nlinarith Nat.Prime Finset EuclideanGeometry continuity\n  /- linarith positivity decide -/";
    for (const [proof, v] of [
      ["by\n  simp", proved(1)],
      ["by\n  simp", verification(Verdict.ERROR, { total: 1, valid: 0, errors: 1 })],
      ["by\n  constructor\n  simp", verification(Verdict.INCOMPLETE, { total: 2, valid: 2, goals: 1, errors: 1 })],
    ] as const) {
      const plain = await scoreOne(preset(name), theorem, completion(leanAnswer(proof), tokens), v);
      const commented = await scoreOne(preset(name), theorem, completion(leanAnswer(proof.replace("by", `by ${keywords}`)), tokens), v);
      expect(commented.reward, `${proof} ${Verdict[v.verdict]}`).toBe(plain.reward);
      // Format tags inside a comment break the structure rather than supply it.
      const tagged = await scoreOne(preset(name), theorem, completion(`-- <think>x</think>\n${proof}`, tokens), v);
      const untagged = await scoreOne(preset(name), theorem, completion(`-- x\n${proof}`, tokens), v);
      expect(tagged.reward).toBeLessThanOrEqual(untagged.reward);
    }
  });
});

function leanVariant(next: () => number, solved: boolean): Attempt {
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const tactics = 1 + Math.floor(next() * 60);
  const proof = `by\n${Array.from({ length: tactics }, () => `  ${pick(["simp", "ring", "omega", "skip", "try linarith", "exact h", "-- ring"])}`).join("\n")}`;
  const body = pick([
    leanAnswer(proof),
    proof,
    `<think>${"think ".repeat(Math.floor(next() * 900))}</think>\n\`\`\`lean\n${proof}\n\`\`\``,
  ]);
  const finishReason = next() < 0.2 ? FinishReason.LENGTH : FinishReason.STOP;
  const text = next() < 0.3 ? `${body}${" pad".repeat(Math.floor(next() * 1500))}` : body;
  if (solved) return { label: "proved", completion: completion(text, { finishReason }), verification: proved(tactics) };
  const verdict = pick([Verdict.INCOMPLETE, Verdict.ERROR, Verdict.TIMEOUT, Verdict.REJECTED, Verdict.CRASHED]);
  const valid = Math.floor(next() * (tactics + 1));
  const v = verification(verdict, {
    total: tactics,
    valid,
    goals: Math.floor(next() * 3),
    errors: Math.floor(next() * 3),
    sorries: next() < 0.1 ? 1 : 0,
  });
  return { label: Verdict[verdict], completion: completion(text, { finishReason }), verification: v };
}

function mathVariant(next: () => number, solved: boolean): Completion {
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const answer = solved
    ? pick(["\\boxed{\\frac{3}{4}}", "\\boxed{0.75}", "\\boxed{75\\%}"])
    : pick(["\\boxed{4/3}", "\\boxed{}", "", "\\boxed{0.7}", "\\boxed{3/4"]);
  const thinking = next() < 0.5 ? `<think>${"step ".repeat(Math.floor(next() * 1200))}</think>` : "";
  const tail = next() < 0.3 ? " and so on".repeat(Math.floor(next() * 600)) : "";
  return completion(`${thinking}${answer}${tail}`, { finishReason: next() < 0.2 ? FinishReason.LENGTH : FinishReason.STOP });
}

describe("seeded search for unsolved completions that reach solved rewards", () => {
  it.each(PRESET_NAMES)("%s: Lean", async (name) => {
    const random = new SeededRandom(7);
    const next = () => random.next();
    const solved = Array.from({ length: 60 }, () => leanVariant(next, true));
    const unsolved = Array.from({ length: 240 }, () => leanVariant(next, false));
    const score = (attempts: Attempt[]) =>
      scoreGroup(
        preset(name),
        theorem,
        attempts.map((a) => a.completion),
        attempts.map((a) => a.verification),
      );
    const solvedRewards = (await score(solved)).map((r) => r.reward);
    const unsolvedRewards = (await score(unsolved)).map((r) => r.reward);
    expect(Math.max(...unsolvedRewards)).toBeLessThan(Math.min(...solvedRewards));
  });

  it.each(PRESET_NAMES)("%s: math", async (name) => {
    const random = new SeededRandom(11);
    const next = () => random.next();
    const problem = mathProblem("\\frac{3}{4}");
    const solvedRewards = (
      await scoreGroup(
        preset(name),
        problem,
        Array.from({ length: 60 }, () => mathVariant(next, true)),
      )
    ).map((r) => r.reward);
    const unsolved = await scoreGroup(
      preset(name),
      problem,
      Array.from({ length: 240 }, () => mathVariant(next, false)),
    );
    expect(unsolved.every((r) => !r.solved)).toBe(true);
    expect(Math.max(...unsolved.map((r) => r.reward))).toBeLessThan(Math.min(...solvedRewards));
  });
});
