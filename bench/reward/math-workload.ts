// Math completions to score, as a training run produces them: groups of 8
// completions per problem (the ground truth repeats within a group, the answers
// do not), each with ~1 kB of reasoning before its box, in the answer forms math
// datasets use. Each completion knows whether it should be judged correct.
import { SeededRandom } from "@lean-grpo/random";

export interface MathCase {
  completion: string;
  truth: string;
  correct: boolean;
  form: string;
}

/** `int` draws an integer; `salt` differs per workload so that no ground truth repeats across workloads. */
type Form = (int: (lo: number, hi: number) => number, salt: number) => { truth: string; right: string[]; wrong: string[] };

const FORMS: Record<string, Form> = {
  integer: (int, salt) => {
    const n = salt * 1_000_000 + int(1000, 999_999);
    return { truth: String(n), right: [n.toLocaleString("en-US"), `${n}`, `x = ${n}`], wrong: [String(n + 1), String(n * 10)] };
  },
  fraction: (int, salt) => {
    const a = salt * 100 + int(1, 97);
    const b = a + int(1, 50); // b ≠ a, so that the inverted fraction is wrong
    return {
      truth: `\\frac{${a}}{${b}}`,
      right: [`\\dfrac{${2 * a}}{${2 * b}}`, `${a}/${b}`],
      wrong: [`\\frac{${b}}{${a}}`, `\\frac{${a + 1}}{${b}}`],
    };
  },
  decimal: (int, salt) => {
    const n = salt * 10_000 + int(1, 9999);
    return { truth: `\\frac{${n}}{8}`, right: [(n / 8).toString(), `${n / 8}`], wrong: [(n / 8 + 0.5).toString()] };
  },
  percent: (int, salt) => {
    const p = salt * 100 + int(1, 99);
    return { truth: String(p / 100), right: [`${p}\\%`], wrong: [`${p + 1}\\%`] };
  },
  sqrt: (int, salt) => {
    // Brace-less \sqrt takes one digit: \sqrt13 is √1·3.
    const [k, m] = [salt * 60 + int(2, 59), [2, 3, 5, 6, 7, 10, 11, 13, 14, 15][int(0, 9)]!];
    return {
      truth: `${k}\\sqrt{${m}}`,
      right: [`\\sqrt{${k * k * m}}`, m < 10 ? `${k}\\sqrt${m}` : `${k}\\sqrt{${m}}`],
      wrong: [`\\sqrt{${k * k * m + 1}}`, `${k + 1}\\sqrt{${m}}`],
    };
  },
  pi: (int, salt) => {
    const [a, b] = [salt * 100 + int(1, 99), int(2, 99)];
    return { truth: `\\frac{${a}\\pi}{${b}}`, right: [`\\frac{${a}}{${b}}\\pi`, `${a}\\pi/${b}`], wrong: [`\\frac{${a}}{${b + 1}}\\pi`] };
  },
  polynomial: (int, salt) => {
    const a = salt * 100 + int(1, 99);
    return { truth: `(x+${a})^2`, right: [`x^2+${2 * a}x+${a * a}`], wrong: [`x^2+${a}x+${a * a}`, `x^2+${a * a}`] };
  },
  interval: (int, salt) => {
    const [a, b] = [int(-99, 0) - salt * 100, int(1, 99) + salt * 100];
    return { truth: `[${a}, ${b})`, right: [`\\left[${a},${b}\\right)`], wrong: [`(${a}, ${b}]`, `[${a}, ${b}]`] };
  },
  tuple: (int, salt) => {
    const [a, b] = [salt * 100 + int(1, 49), salt * 100 + int(50, 99)];
    return { truth: `(${a}, ${b})`, right: [`(${a},${b})`, `\\left(${a}, \\frac{${2 * b}}{2}\\right)`], wrong: [`(${b}, ${a})`] };
  },
};

const FILLER = [
  "First, we set up the problem and write down what is known. ",
  "Then we simplify the expression step by step, checking each line. ",
  "Substituting the values gives a smaller equation that we can solve directly. ",
  "We double-check the arithmetic, since a sign error here would change everything. ",
];

export function mathWorkload(problems: number, seed = 1): MathCase[] {
  const random = new SeededRandom(seed);
  const next = () => random.next();
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const forms = Object.keys(FORMS);
  const cases: MathCase[] = [];
  for (let p = 0; p < problems; p++) {
    const form = forms[p % forms.length]!;
    const { truth, right, wrong } = FORMS[form]!(int, seed);
    const reasoning = () => Array.from({ length: 16 }, () => FILLER[int(0, FILLER.length - 1)]).join("");
    for (let i = 0; i < 8; i++) {
      // 4 right, 3 wrong, 1 without a box.
      if (i < 4)
        cases.push({ completion: `${reasoning()}So the answer is $\\boxed{${right[i % right.length]}}$.`, truth, correct: true, form });
      else if (i < 7) cases.push({ completion: `${reasoning()}Hence \\boxed{${wrong[i % wrong.length]}}.`, truth, correct: false, form });
      else cases.push({ completion: `${reasoning()}The answer is ${right[0]}.`, truth, correct: false, form });
    }
  }
  return cases;
}
