// The arithmetic data: the example sets are disjoint, their answers are right (checked by
// evaluating the expression here, not by the generator), and the generator is seeded.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { allProblems, arithProblem, drawProblems } from "../../scripts/arith/arith-problems.js";
import { arithDataSets, sftRecords, WORKED_SHARE } from "../../scripts/arith/make-data.js";
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

  it("is what make-data.ts writes, and the validation and warm-start data avoid both sets and each other", () => {
    const sets = arithDataSets({ heldout: 200, train: 800, validation: 300, sft: 2000 });
    expect(sets.train.map(({ problem, answer }) => ({ problem, answer }))).toEqual(train);
    expect(sets.heldout.map(({ problem, answer }) => ({ problem, answer }))).toEqual(heldout);
    const used = new Set([...train, ...heldout].map((r) => r.problem));
    for (const p of sets.validation) expect(used.has(p.problem)).toBe(false);
    for (const p of sets.validation) used.add(p.problem);
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

  it("has a teacher that is always right and always boxes, working out at the set rate", () => {
    const problems = drawProblems(2000, 11);
    const records = sftRecords(problems);
    expect(records).toEqual(sftRecords(problems));
    for (const r of records) expect(r.solution.endsWith(`\\boxed{${evaluate(r.problem)}}`), r.solution).toBe(true);
    const workable = records.filter((_, i) => problems[i]!.worked !== problems[i]!.solution);
    const worked = workable.filter((r) => r.solution.includes(":")).length / workable.length;
    expect(Math.abs(worked - WORKED_SHARE)).toBeLessThan(0.04);
  });

  it("works every sum and difference in columns: units, then tens with the carry or borrow, digits that make the answer", () => {
    expect(arithProblem(23, "+", 45).worked).toBe("23 + 45: 3+5=8, 2+4+0=6, \\boxed{68}");
    expect(arithProblem(27, "+", 45).worked).toBe("27 + 45: 7+5=12, 2+4+1=7, \\boxed{72}");
    expect(arithProblem(42, "-", 27).worked).toBe("42 - 27: 12-7=5, 4-1-2=1, \\boxed{15}");
    expect(arithProblem(7, "×", 8).worked).toBe("7 × 8 = \\boxed{56}");
    for (const p of allProblems()) {
      const boxed = evaluate(p.problem);
      if (p.problem.includes("×")) {
        expect(p.worked).toBe(p.solution);
        continue;
      }
      const match = /^(\d+) ([+-]) (\d+): (\d+)[+-](\d+)=(\d+), (\d)[+-](\d)[+-](\d)=(\d), \\boxed\{(\d+)\}$/.exec(p.worked);
      expect(match, p.worked).not.toBeNull();
      const [a, b, unitsA, unitsB, units, tensA, second, third, tens, answer] = [1, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((i) =>
        Number(match![i]),
      );
      expect(answer).toBe(boxed);
      expect(unitsB).toBe(b! % 10);
      expect(tensA).toBe(Math.floor(a! / 10));
      expect(unitsA! % 10).toBe(a! % 10);
      if (match![2] === "+") {
        // tens: a's + b's + the carry
        expect(unitsA).toBe(a! % 10);
        expect([units, third, second]).toEqual([unitsA! + unitsB!, units! >= 10 ? 1 : 0, Math.floor(b! / 10)]);
        expect(tens).toBe(tensA! + second! + third!);
        expect(10 * tens! + (units! % 10)).toBe(boxed);
      } else {
        // tens: a's − the borrow − b's
        expect(second).toBe(unitsA! >= 10 ? 1 : 0);
        expect(third).toBe(Math.floor(b! / 10));
        expect([units, tens]).toEqual([unitsA! - unitsB!, tensA! - second! - third!]);
        expect(10 * tens! + units!).toBe(boxed);
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
