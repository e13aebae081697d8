// How a math completion answers, apart from whether the verifier accepts it: the last
// number it writes (right or not, boxed or not), whether it boxes an answer, and whether it
// works the answer out (writes an intermediate number: one that is neither in the problem
// nor its final number) or answers directly. The held-out evaluation reports accuracy per
// form with these, so a run shows how the policy changed, not only that it did.

export type AnswerForm = "worked" | "direct";

const NUMBER = /-?\d+(?:\.\d+)?/g;

function numbers(text: string): string[] {
  return text.match(NUMBER) ?? [];
}

/** The last number the completion writes, or null when it writes none. */
export function lastNumber(completion: string): number | null {
  const all = numbers(completion);
  return all.length === 0 ? null : Number(all[all.length - 1]);
}

/** The last number written equals the expected answer (a number), boxed or not. False when the answer is not a number. */
export function isRightNumber(completion: string, answer: string): boolean {
  const expected = Number(answer.trim());
  const last = lastNumber(completion);
  return last !== null && answer.trim() !== "" && Number.isFinite(expected) && last === expected;
}

/** Worked out when a number before the last one is not one of the problem's own numbers. */
export function answerForm(completion: string, problem: string): AnswerForm {
  const given = new Set(numbers(problem).map((n) => Number(n.replace(/^-/, ""))));
  const written = numbers(completion).map((n) => Number(n.replace(/^-/, "")));
  return written.slice(0, -1).some((n) => !given.has(n)) ? "worked" : "direct";
}

export function isBoxed(completion: string): boolean {
  return completion.includes("\\boxed{");
}

/** One scored completion of a math problem, as the evaluation saw it. */
export interface FormSample {
  text: string;
  /** Completion tokens generated. */
  tokens: number;
  /** Cut by max_tokens rather than ended by the model. */
  truncated: boolean;
  /** Accepted by the verifier (the reward service's `solved`). */
  solved: boolean;
}

/** Counts per problem, summed over problems into AnswerFormStats. */
export interface FormCounts {
  samples: number;
  solved: number;
  rightNumber: number;
  boxed: number;
  worked: number;
  workedSolved: number;
  workedRightNumber: number;
  directSolved: number;
  directRightNumber: number;
  tokens: number;
  truncated: number;
}

export function formCounts(samples: readonly FormSample[], problem: string, answer: string): FormCounts {
  const counts = emptyCounts();
  for (const sample of samples) {
    const right = isRightNumber(sample.text, answer);
    const worked = answerForm(sample.text, problem) === "worked";
    counts.samples++;
    counts.solved += Number(sample.solved);
    counts.rightNumber += Number(right);
    counts.boxed += Number(isBoxed(sample.text));
    counts.worked += Number(worked);
    counts[worked ? "workedSolved" : "directSolved"] += Number(sample.solved);
    counts[worked ? "workedRightNumber" : "directRightNumber"] += Number(right);
    counts.tokens += sample.tokens;
    counts.truncated += Number(sample.truncated);
  }
  return counts;
}

function emptyCounts(): FormCounts {
  return {
    samples: 0,
    solved: 0,
    rightNumber: 0,
    boxed: 0,
    worked: 0,
    workedSolved: 0,
    workedRightNumber: 0,
    directSolved: 0,
    directRightNumber: 0,
    tokens: 0,
    truncated: 0,
  };
}

/**
 * How the completions of an evaluation answered, over all its math completions: shares
 * of all completions, accuracies within each form (null when no completion took it).
 */
export interface AnswerFormStats {
  /** Math completions counted (every sample of every math problem). */
  completions: number;
  /** The last number written is the answer, boxed or not. */
  right_number: number;
  /** Wrote a \boxed{...}. */
  boxed: number;
  /** Worked out (an intermediate number), rather than answered directly. */
  worked_share: number;
  /** Verifier-accepted share among worked-out completions, and among direct ones. */
  accuracy_worked: number | null;
  accuracy_direct: number | null;
  right_number_worked: number | null;
  right_number_direct: number | null;
  /** Mean completion length in tokens, and the share cut by max_tokens. */
  completion_tokens: number;
  truncated: number;
}

export function answerFormStats(perProblem: readonly FormCounts[]): AnswerFormStats | undefined {
  const total = emptyCounts();
  for (const counts of perProblem) for (const key of Object.keys(total) as (keyof FormCounts)[]) total[key] += counts[key];
  if (total.samples === 0) return undefined;
  const direct = total.samples - total.worked;
  const within = (count: number, of: number) => (of === 0 ? null : count / of);
  return {
    completions: total.samples,
    right_number: total.rightNumber / total.samples,
    boxed: total.boxed / total.samples,
    worked_share: total.worked / total.samples,
    accuracy_worked: within(total.workedSolved, total.worked),
    accuracy_direct: within(total.directSolved, direct),
    right_number_worked: within(total.workedRightNumber, total.worked),
    right_number_direct: within(total.directRightNumber, direct),
    completion_tokens: total.tokens / total.samples,
    truncated: total.truncated / total.samples,
  };
}
