// The arithmetic data: the example sets are disjoint, their answers are right (checked by
// evaluating the expression here, not by the generator), and the generator is seeded.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { allProblems, arithProblem, drawProblems, plainSolution } from "../../scripts/arith/arith-problems.js";
import { arithDataSets, BOXED_SHARE, sftRecords, WORKED_SHARE } from "../../scripts/arith/make-data.js";
import { boxedAnswer, isCorrect } from "../../scripts/arith/greedy-accuracy.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function jsonl(file: string): Record<string, string>[] {
  return readFileSync(path.join(root, file), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, string>);
}

function evaluate(problem: string): number {
  const match = /^What is (\d+) ([+\-×]) (\d+)\?$/.exec(problem);
  if (!match) throw new Error(`unexpected problem text ${problem}`);
  const [a, b] = [Number(match[1]), Number(match[3])];
  return match[2] === "+" ? a + b : match[2] === "-" ? a - b : a * b;
}

describe("arithmetic data", () => {
  const train = jsonl("examples/arith.jsonl");
  const heldout = jsonl("examples/arith-heldout.jsonl");

  it("ships a training set and a disjoint held-out set with correct answers", () => {
    expect(train.length).toBe(800);
    expect(heldout.length).toBe(200);
    const trainProblems = new Set(train.map((r) => r.problem));
    expect(trainProblems.size).toBe(train.length);
    for (const record of heldout) expect(trainProblems.has(record.problem!), record.problem).toBe(false);
    for (const record of [...train, ...heldout]) {
      expect(Object.keys(record).sort()).toEqual(["answer", "problem"]);
      expect(Number(record.answer), record.problem).toBe(evaluate(record.problem!));
    }
  });

  it("is what make-data.ts writes, and the warm-start data avoids both sets", () => {
    const sets = arithDataSets({ heldout: 200, train: 800, sft: 2000 });
    expect(sets.train.map(({ problem, answer }) => ({ problem, answer }))).toEqual(train);
    expect(sets.heldout.map(({ problem, answer }) => ({ problem, answer }))).toEqual(heldout);
    const used = new Set([...train, ...heldout].map((r) => r.problem));
    for (const pair of sets.sft) {
      expect(used.has(pair.problem)).toBe(false);
      expect(pair.solution.endsWith(`\\boxed{${evaluate(pair.problem)}}`)).toBe(true);
    }
    // Every set has the same mix of operations (drawn uniformly over the problem space).
    const products = (records: ReadonlyArray<{ problem?: string }>) =>
      records.filter((r) => r.problem?.includes("×")).length / records.length;
    expect(Math.abs(products(heldout) - 100 / 3875)).toBeLessThan(0.03);
    expect(Math.abs(products(sets.sft) - 100 / 3875)).toBeLessThan(0.02);
  });

  it("has a teacher that is always right, working out, boxing or not at the set rates", () => {
    expect(plainSolution(arithProblem(27, "+", 45))).toBe("27 + 45 = 72");
    const problems = drawProblems(2000, 11);
    const records = sftRecords(problems);
    expect(records).toEqual(sftRecords(problems));
    for (const r of records)
      expect(r.solution.endsWith(`\\boxed{${evaluate(r.problem)}}`) || r.solution.endsWith(` = ${evaluate(r.problem)}`), r.solution).toBe(
        true,
      );
    const workable = records.filter((_, i) => problems[i]!.worked !== problems[i]!.solution);
    const worked = workable.filter((r) => r.solution.includes(":")).length / workable.length;
    const direct = records.filter((r) => !r.solution.includes(":"));
    const boxed = direct.filter((r) => r.solution.includes("\\boxed{")).length / direct.length;
    expect(Math.abs(worked - WORKED_SHARE)).toBeLessThan(0.04);
    expect(Math.abs(boxed - BOXED_SHARE)).toBeLessThan(0.04);
  });

  it("works every sum and difference as tens + units that add up to the answer, borrowing when the units fall short", () => {
    expect(arithProblem(23, "+", 45).worked).toBe("23 + 45: 60 + 8 = \\boxed{68}");
    expect(arithProblem(27, "+", 45).worked).toBe("27 + 45: 60 + 12 = \\boxed{72}");
    expect(arithProblem(42, "-", 27).worked).toBe("42 - 27: 10 + 5 = \\boxed{15}");
    expect(arithProblem(7, "×", 8).worked).toBe("7 × 8 = \\boxed{56}");
    for (const p of allProblems()) {
      const match = /^(\d+) ([+\-×]) (\d+)(?:: (\d+) \+ (\d+))? = \\boxed\{(\d+)\}$/.exec(p.worked);
      expect(match, p.worked).not.toBeNull();
      const [, , op, , tens, units, boxed] = match!;
      expect(Number(boxed)).toBe(evaluate(p.problem));
      if (op !== "×") {
        expect(Number(tens) + Number(units), p.worked).toBe(Number(boxed));
        expect(Number(tens) % 10, p.worked).toBe(0);
        expect(Number(units), p.worked).toBeLessThan(20);
      }
    }
  });

  it("draws the same problems for the same seed and refuses an impossible count", () => {
    expect(drawProblems(20, 7)).toEqual(drawProblems(20, 7));
    expect(drawProblems(20, 7)).not.toEqual(drawProblems(20, 8));
    expect(() => drawProblems(20_000, 1)).toThrow(/distinct problems/);
  });

  it("checks answers by the last \\boxed{...} number", () => {
    expect(boxedAnswer("2 + 2 = \\boxed{3}, no: \\boxed{4}")).toBe("4");
    expect(isCorrect("12 × 3 = \\boxed{36}", "36")).toBe(true);
    expect(isCorrect("\\boxed{36.0}", "36")).toBe(true);
    expect(isCorrect("\\boxed{37}", "36")).toBe(false);
    expect(isCorrect("36", "36")).toBe(false);
    expect(isCorrect("\\boxed{}", "0")).toBe(false);
  });
});
