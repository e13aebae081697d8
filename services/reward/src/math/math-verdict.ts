// The verdict on a math completion: its last boxed answer against the ground truth.
import { answersEquivalent } from "./answer-equivalence.js";
import { extractLastBoxed } from "./extract-boxed.js";
import { normalizeAnswer } from "./normalize-answer.js";

export type MathOutcome = "correct" | "wrong" | "no_answer";

export interface MathVerdict {
  outcome: MathOutcome;
  /** The boxed answer as written, when there was one. */
  answer?: string;
  detail: string;
}

export interface MathJudgeOptions {
  tolerance: number;
  /** Longer boxed answers are wrong without being parsed. */
  maxAnswerChars: number;
}

const SHOWN = 40;

function shown(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > SHOWN ? `${flat.slice(0, SHOWN)}…` : flat;
}

export function judgeMathAnswer(completion: string, groundTruth: string, options: MathJudgeOptions): MathVerdict {
  const boxed = extractLastBoxed(completion);
  if (boxed.kind === "none") return { outcome: "no_answer", detail: "no \\boxed{} answer" };
  if (boxed.kind === "unclosed") return { outcome: "no_answer", detail: "last \\boxed{ never closes" };
  const answer = boxed.content;
  if (answer.length > options.maxAnswerChars) {
    return { outcome: "wrong", answer, detail: `boxed answer longer than ${options.maxAnswerChars} characters` };
  }
  const normalized = normalizeAnswer(answer);
  if (normalized === "") return { outcome: "no_answer", answer, detail: "empty \\boxed{}" };
  const equal = answersEquivalent(normalized, normalizedTruth(groundTruth), options);
  return equal
    ? { outcome: "correct", answer, detail: `boxed ${shown(answer)} == ${shown(groundTruth)}` }
    : { outcome: "wrong", answer, detail: `boxed ${shown(answer)} != ${shown(groundTruth)}` };
}

/** A ground truth may itself be written boxed. */
function normalizedTruth(groundTruth: string): string {
  const boxed = extractLastBoxed(groundTruth);
  return normalizeAnswer(boxed.kind === "found" ? boxed.content : groundTruth);
}
