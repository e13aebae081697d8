// Takes the proof out of a completion: after the thinking, from the last Lean
// code block (or the bare text), the body after the theorem's `:=`. The verifier
// re-attaches the trusted statement, so a restated (or altered) statement in
// the completion is dropped here, never checked.
import { blankNonCode } from "./lean-source.js";

export interface ExtractedProof {
  /** What VerifyRequest.proof gets: the text after `:=`, e.g. "by\n  simp". */
  body: string;
  /** `body` with comments and literals blanked, for scorers that read the proof. */
  code: string;
}

const FENCE = /```([^\n`]*)\n([\s\S]*?)(?:```|$)/g;
const DECLARATION = /^[ \t]*(?:@\[[^\]\n]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*(theorem|lemma|example)\b[ \t]*([^\s(:{[]*)/gm;
const NEXT_COMMAND = /^(?:theorem|lemma|example|def|abbrev|instance|structure|inductive|namespace|section|end|open|#|@\[)/m;

/** Undefined when the completion holds no proof text (still thinking, or only comments). */
export function extractProof(completion: string, theoremName: string): ExtractedProof | undefined {
  const afterThinking = answerPart(completion);
  if (afterThinking === undefined) return undefined;
  const code = lastLeanBlock(afterThinking) ?? afterThinking;
  if (blankNonCode(code).trim() === "") return undefined;
  const body = proofBody(code, theoremName);
  if (body === undefined) return undefined;
  const blanked = blankNonCode(body);
  // ":= by" with nothing after it is no proof either.
  return blanked.replace(/^\s*by\b/, "").trim() === "" ? undefined : { body, code: blanked };
}

/** The text after the last </think>; undefined when a <think> never closes. */
function answerPart(completion: string): string | undefined {
  const close = completion.lastIndexOf("</think>");
  if (close >= 0) return completion.slice(close + "</think>".length);
  return completion.includes("<think>") ? undefined : completion;
}

function lastLeanBlock(text: string): string | undefined {
  let last: string | undefined;
  for (const match of text.matchAll(FENCE)) {
    const info = match[1]!.trim().toLowerCase();
    if (info === "" || info === "lean" || info === "lean4") last = match[2]!;
  }
  return last;
}

function proofBody(code: string, theoremName: string): string | undefined {
  const blanked = blankNonCode(code);
  const declarations = [...blanked.matchAll(DECLARATION)];
  if (declarations.length === 0) return bareBody(code);
  const chosen = declarations.find((d) => d[2] === theoremName || d[2]?.endsWith(`.${theoremName}`)) ?? declarations.at(-1)!;
  const assign = topLevelAssign(blanked, chosen.index + chosen[0].length);
  if (assign < 0) return undefined;
  const rest = code.slice(assign + 2);
  const next = NEXT_COMMAND.exec(blankNonCode(rest));
  return (next ? rest.slice(0, next.index) : rest).trim();
}

/** Index of the first `:=` outside brackets (binder defaults like `(n : ℕ := 0)` are inside). */
function topLevelAssign(blanked: string, from: number): number {
  let depth = 0;
  for (let i = from; i < blanked.length - 1; i++) {
    const ch = blanked[i]!;
    if ("([{⟨".includes(ch)) depth++;
    else if (")]}⟩".includes(ch)) depth = Math.max(0, depth - 1);
    else if (depth === 0 && ch === ":" && blanked[i + 1] === "=") return i;
  }
  return -1;
}

/**
 * Text with no declaration continues a prompt that ended in the statement: a
 * leading ":=" is dropped, and bare tactics are put under `by`.
 */
function bareBody(code: string): string {
  const text = code.replace(/^\s*:=/, "").replace(/\s+$/, "");
  if (/^\s*by\b/.test(text)) return text.trim();
  const lines = text.split("\n");
  while (lines.length > 0 && lines[0]!.trim() === "") lines.shift();
  const indent = Math.min(...lines.filter((line) => line.trim() !== "").map((line) => line.length - line.trimStart().length));
  return `by\n${lines.map((line) => (line.trim() === "" ? "" : `  ${line.slice(indent)}`)).join("\n")}`;
}
