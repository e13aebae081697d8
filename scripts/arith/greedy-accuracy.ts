// Greedy accuracy of a model on {problem, answer} records: each problem rendered as a
// one-message user turn with the chat template, decoded greedily, and counted right when
// the last \boxed{...} of the answer holds the expected number.
import { type CausalLM, type ModelTokenizer, generate, type LoraAdapter } from "@lean-grpo/lm";

export interface ArithRecord {
  problem: string;
  answer: string;
}

/** The content of the last \boxed{...} (no nested braces in arithmetic answers), or null. */
export function boxedAnswer(text: string): string | null {
  const matches = [...text.matchAll(/\\boxed\{([^{}]*)\}/g)];
  return matches.length === 0 ? null : matches[matches.length - 1]![1]!.trim();
}

/** Exact-number check: "68", " 68 " and "68.0" match 68; anything else does not. */
export function isCorrect(completion: string, answer: string): boolean {
  const boxed = boxedAnswer(completion);
  if (boxed === null || boxed === "" || !Number.isFinite(Number(boxed))) return false;
  return Number(boxed) === Number(answer);
}

export interface GreedyResult {
  accuracy: number;
  correct: number;
  total: number;
  /** Completions that wrote a \boxed{...} at all. */
  boxed: number;
  /** Completions whose last number is the answer, boxed or not: the arithmetic, apart from the form. */
  rightNumber: number;
  completions: string[];
}

export async function greedyAccuracy(
  model: CausalLM,
  tokenizer: ModelTokenizer,
  records: readonly ArithRecord[],
  options: { maxNewTokens?: number; batchSize?: number; adapter?: LoraAdapter | null } = {},
): Promise<GreedyResult> {
  const batchSize = options.batchSize ?? 50;
  const completions: string[] = [];
  for (let first = 0; first < records.length; first += batchSize) {
    const slice = records.slice(first, first + batchSize);
    const prompts = slice.map((r) => tokenizer.encodeChat([{ role: "user", content: r.problem }], { addGenerationPrompt: true }));
    const sequences = await generate(model, prompts, {
      maxNewTokens: options.maxNewTokens ?? 32,
      temperature: 0,
      seed: 0,
      adapter: options.adapter ?? null,
    });
    completions.push(...sequences.map((s) => tokenizer.decode(s.tokenIds, { skipSpecialTokens: true })));
  }
  const correct = records.filter((r, i) => isCorrect(completions[i]!, r.answer)).length;
  const boxed = completions.filter((c) => boxedAnswer(c) !== null).length;
  const rightNumber = records.filter((r, i) => {
    const numbers = completions[i]!.match(/-?\d+/g);
    return numbers !== null && Number(numbers[numbers.length - 1]) === Number(r.answer);
  }).length;
  return { accuracy: correct / records.length, correct, total: records.length, boxed, rightNumber, completions };
}
