// Seeded arithmetic problems with boxed answers: the data of the shipped model's warm start
// (SFT), of its RL training set and of its held-out set. Every problem is keyed by its
// text, so sets drawn from the same generator can be kept disjoint.
import { SeededRandom } from "@lean-grpo/random";

export type Operation = "+" | "-" | "×";

export interface ArithProblem {
  /** The user's question, e.g. "What is 23 + 45?". */
  problem: string;
  /** The exact integer answer, as text. */
  answer: string;
  /** The direct answer, `23 + 45 = \boxed{68}`. */
  solution: string;
  /**
   * The answer worked out in columns, units first, each step a one-digit fact written where
   * it is used: `27 + 45: 7+5=12, 2+4+1=7, \boxed{72}` (the carry added to the tens) and
   * `42 - 27: 12-7=5, 4-1-2=1, \boxed{15}` (the borrow taken from the tens). Products of
   * single digits have no worked form (the same as `solution`).
   */
  worked: string;
}

/** Operand ranges: sums and differences of numbers below 50 (never negative), times tables up to 9. */
const RANGES: Record<Operation, [number, number]> = { "+": [0, 49], "-": [0, 49], "×": [0, 9] };
const OPERATIONS = Object.keys(RANGES) as Operation[];

export function arithProblem(a: number, operation: Operation, b: number): ArithProblem {
  const value = operation === "+" ? a + b : operation === "-" ? a - b : a * b;
  const expression = `${a} ${operation} ${b}`;
  const solution = `${expression} = \\boxed{${value}}`;
  return { problem: `What is ${expression}?`, answer: String(value), solution, worked: workedSolution(a, operation, b, value) ?? solution };
}

/** Units, then tens with the carry or borrow: `a op b: units step, tens step, \boxed{value}`; null for products. */
function workedSolution(a: number, operation: Operation, b: number, value: number): string | null {
  if (operation === "×") return null;
  const [aTens, aUnits, bTens, bUnits] = [Math.floor(a / 10), a % 10, Math.floor(b / 10), b % 10];
  let units: string;
  let tens: string;
  if (operation === "+") {
    const sum = aUnits + bUnits;
    const carry = sum >= 10 ? 1 : 0;
    units = `${aUnits}+${bUnits}=${sum}`;
    tens = `${aTens}+${bTens}+${carry}=${aTens + bTens + carry}`;
  } else {
    // Borrow ten from the tens when a has fewer units (a ≥ b, so it has more tens).
    const borrow = aUnits < bUnits ? 1 : 0;
    units = `${aUnits + 10 * borrow}-${bUnits}=${aUnits + 10 * borrow - bUnits}`;
    tens = `${aTens}-${borrow}-${bTens}=${aTens - borrow - bTens}`;
  }
  return `${a} ${operation} ${b}: ${units}, ${tens}, \\boxed{${value}}`;
}

/** Every problem of the ranges, in a fixed order (3,875: 2,500 sums, 1,275 differences, 100 products). */
export function allProblems(): ArithProblem[] {
  const out: ArithProblem[] = [];
  for (const operation of OPERATIONS) {
    const [low, high] = RANGES[operation];
    for (let a = low; a <= high; a++) {
      for (let b = low; b <= high; b++) if (operation !== "-" || b <= a) out.push(arithProblem(a, operation, b));
    }
  }
  return out;
}

/**
 * `count` distinct problems drawn uniformly (without replacement) from the whole problem
 * space with `seed`, none of whose texts is in `exclude`. Uniform over problems, not over
 * operations: sets drawn one after another keep the same mix (drawing an operation first
 * let the first set use up the 100 products and left the last set none).
 * Throws when the space cannot supply that many.
 */
export function drawProblems(count: number, seed: number, exclude: ReadonlySet<string> = new Set()): ArithProblem[] {
  const pool = allProblems().filter((p) => !exclude.has(p.problem));
  if (count > pool.length)
    throw new Error(`only ${pool.length} of ${count} distinct problems could be drawn outside the ${exclude.size} excluded`);
  const random = new SeededRandom(seed);
  // Partial Fisher–Yates: the first `count` places of a seeded shuffle.
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random.next() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, count);
}
