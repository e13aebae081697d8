// math_answer: the last \boxed{} answer against the ground truth, by
// mathematical equivalence; what correct, wrong and missing answers earn is set
// by parameters (defaults as in the seed: +1 / -1 / -0.5).
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { MathJudgeOptions } from "../math/math-verdict.js";
import { defaultValues, integerParam, numberParam, type ParamValues } from "../reward/params.js";
import { defineScorer, mathEvidence } from "../reward/scorer.js";

const params = {
  correct: numberParam({ default: 1, description: "Value of an answer equivalent to the ground truth." }),
  wrong: numberParam({ default: -1, description: "Value of a boxed answer that is not equivalent." }),
  no_answer: numberParam({ default: -0.5, description: "Value when there is no \\boxed{} answer, or it is empty or unclosed." }),
  tolerance: numberParam({
    default: 1e-9,
    min: 0,
    max: 0.1,
    description:
      "Relative tolerance for values only the symbolic engine compares (irrationals, expressions); plain numbers, " +
      "fractions and percents always compare exactly.",
  }),
  max_answer_chars: integerParam({
    default: 500,
    min: 1,
    max: 100_000,
    description: "Longer boxed answers are wrong without being parsed.",
  }),
};

export const mathAnswerScorer = defineScorer({
  name: "math_answer",
  description:
    'Math tasks. Takes the last \\boxed{...} (nested braces), normalises it (spacing commands, \\dfrac, units, "x =", ' +
    "thousands separators) and compares it with theorem.answer: exactly for numbers, fractions, mixed numbers, percents " +
    "(50% matches 50 and 0.5) and scientific notation; by shape for tuples, intervals, sets and unions; by value with " +
    "@cortex-js/compute-engine for the rest (sample points when there are variables).",
  tasks: [TaskKind.MATH_ANSWER],
  groupLevel: false,
  params,
  check: (p) =>
    p.correct > Math.max(p.wrong, p.no_answer)
      ? undefined
      : `correct (${p.correct}) must be greater than wrong (${p.wrong}) and no_answer (${p.no_answer}), or solving would not pay`,
  bounds: (p) => ({ solved: [p.correct, p.correct], unsolved: [Math.min(p.wrong, p.no_answer), Math.max(p.wrong, p.no_answer)] }),
  score(evidence, p) {
    const verdict = mathEvidence(evidence).math;
    return { value: p[verdict.outcome], detail: verdict.detail };
  },
});

/** How to judge answers under a reward's math_answer parameters (the defaults when it has none). */
export function mathJudgeOptions(resolved: Record<string, unknown> | undefined): MathJudgeOptions {
  const p = { ...defaultValues(params), ...resolved } as ParamValues<typeof params>;
  return { tolerance: p.tolerance, maxAnswerChars: p.max_answer_chars };
}
