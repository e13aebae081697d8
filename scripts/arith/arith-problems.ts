// Seeded arithmetic problems with boxed answers: the data of the shipped model's warm start
// (SFT), of its RL training set and of its held-out set. Every problem is keyed by its
// text, so sets drawn from the same generator can be kept disjoint.
import { SeededRandom } from "@lean-grpo/learner";

export type Operation = "+" | "-" | "×";

export interface ArithProblem {
  /** The user's question, e.g. "What is 23 + 45?". */
  problem: string;
  /** The exact integer answer, as text. */
  answer: string;
  /** A short worked solution ending in \boxed{answer}: what SFT teaches the model to write. */
  solution: string;
}

/** Operand ranges: sums and differences of numbers below 50 (never negative), times tables up to 9. */
const RANGES: Record<Operation, [number, number]> = { "+": [0, 49], "-": [0, 49], "×": [0, 9] };
const OPERATIONS = Object.keys(RANGES) as Operation[];

function integer(random: SeededRandom, [low, high]: [number, number]): number {
  return low + Math.floor(random.next() * (high - low + 1));
}

export function arithProblem(a: number, operation: Operation, b: number): ArithProblem {
  const value = operation === "+" ? a + b : operation === "-" ? a - b : a * b;
  const expression = `${a} ${operation} ${b}`;
  return { problem: `What is ${expression}?`, answer: String(value), solution: `${expression} = \\boxed{${value}}` };
}

function randomProblem(random: SeededRandom): ArithProblem {
  const operation = OPERATIONS[Math.floor(random.next() * OPERATIONS.length)]!;
  let a = integer(random, RANGES[operation]);
  let b = integer(random, RANGES[operation]);
  if (operation === "-" && b > a) [a, b] = [b, a];
  return arithProblem(a, operation, b);
}

/**
 * `count` distinct problems drawn with `seed`, none of whose texts is in `exclude`.
 * Throws when the problem space cannot supply that many.
 */
export function drawProblems(count: number, seed: number, exclude: ReadonlySet<string> = new Set()): ArithProblem[] {
  const random = new SeededRandom(seed);
  const seen = new Set(exclude);
  const out: ArithProblem[] = [];
  for (let attempts = 0; out.length < count; attempts++) {
    if (attempts > count * 100) throw new Error(`only ${out.length} of ${count} distinct problems could be drawn outside the ${exclude.size} excluded`);
    const next = randomProblem(random);
    if (seen.has(next.problem)) continue;
    seen.add(next.problem);
    out.push(next);
  }
  return out;
}
