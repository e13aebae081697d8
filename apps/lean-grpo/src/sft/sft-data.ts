// Warm-start data: prompt/answer pairs from a math JSONL, validated whole before any training,
// and their token ids as the learner trains on them (chat prompt, answer + eos).
import { localDatasetPlace, readDatasetRows } from "@lean-grpo/orchestrator";
import type { ModelPromptFormat, ModelTokenizer } from "@lean-grpo/lm/tokenizer";

/** One warm-start pair: the user's question and the answer the model should write. */
export interface SftPair {
  problem: string;
  completion: string;
}

/**
 * Reads the whole file first (JSONL, parquet or a datasets folder, by the orchestrator's
 * readers): a bad record stops the command before any training, naming its line or row and field.
 */
export async function readSftPairs(file: string): Promise<SftPair[]> {
  const pairs: SftPair[] = [];
  (await readDatasetRows(localDatasetPlace(), file)).forEach(({ where, record }) => {
    const text = (key: string): string | undefined => {
      const value = record[key];
      if (value === undefined || value === null) return undefined;
      if (typeof value === "number") return String(value);
      if (typeof value !== "string") throw new Error(`${where}: "${key}" must be a string`);
      return value;
    };
    const problem = text("problem") ?? text("question");
    const answer = text("answer") ?? text("ground_truth");
    if (!problem) throw new Error(`${where}: missing "problem" (or "question"): the text the model is asked`);
    if (answer === undefined) throw new Error(`${where}: missing "answer" (or "ground_truth"): the expected final answer`);
    const solution = text("solution") ?? `\\boxed{${answer}}`;
    // Boxed or not (warm-start data in the wild is not consistent), it must end in the answer.
    if (!solution.includes(`\\boxed{${answer}}`) && !solution.trimEnd().endsWith(answer)) {
      throw new Error(`${where}: "solution" must contain \\boxed{${answer}} or end with ${answer} (the record's answer)`);
    }
    pairs.push({ problem, completion: solution });
  });
  if (pairs.length === 0) throw new Error(`${file} has no records`);
  return pairs;
}

/** The format a model directory without prompt_format.json is warm-started in: the bare problem as the user turn. */
export const SFT_DEFAULT_FORMAT = { system: "", math_template: "{problem}" } as const satisfies ModelPromptFormat;

/**
 * The prompt as the sampler is given it for this model's format (the base model's
 * prompt_format.json, else SFT_DEFAULT_FORMAT): the math template's text as the user turn, after
 * the system turn if the format has one, through the chat template (or as plain text, system
 * paragraph first, for a model without one); and the completion closed by the eos token.
 */
export function tokenizePair(
  tokenizer: ModelTokenizer,
  pair: SftPair,
  format: ModelPromptFormat = SFT_DEFAULT_FORMAT,
): { promptIds: number[]; completionIds: number[] } {
  const eos = tokenizer.specialTokens.eos_token;
  if (eos === null)
    throw new Error("the tokenizer has no eos_token (tokenizer_config.json); the warm start teaches the model to end its answer with it");
  const text = (format.math_template ?? SFT_DEFAULT_FORMAT.math_template).replaceAll("{problem}", pair.problem);
  const system = format.system ?? "";
  const chat = format.format === "chat" || (format.format !== "text" && tokenizer.hasChatTemplate);
  return {
    promptIds: chat
      ? tokenizer.encodeChat([...(system ? [{ role: "system", content: system }] : []), { role: "user", content: text }], {
          addGenerationPrompt: true,
        })
      : tokenizer.encode(system ? `${system}\n\n${text}` : text, { addSpecialTokens: true }),
    completionIds: tokenizer.encode(pair.completion + eos, { addSpecialTokens: false }),
  };
}
