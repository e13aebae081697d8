// Takes the proof out of a completion: after the thinking, from the last Lean
// code block (or the bare text). For a body-format theorem, the body after the
// theorem's `:=`: the verifier re-attaches the trusted statement, so a restated (or
// altered) statement in the completion is dropped here, never checked. For a
// whole-file theorem (or `auto` and a text that begins with a declaration), the whole
// file, auxiliary declarations included: the verifier takes it apart and checks that
// its theorem states what the dataset states.
import {
  codeTokens,
  nextCommandAtLineStart,
  readsAsWholeFile,
  theoremDeclarations,
  topLevelAssign,
  type ProofFormat,
} from "@lean-grpo/lean";
import { blankNonCode } from "./lean-source.js";

export interface ExtractedProof {
  /** What VerifyRequest.proof gets: the text after `:=`, e.g. "by\n  simp"; for a whole-file proof, the file. */
  body: string;
  /** `body` with comments and literals blanked, for scorers that read the proof. */
  code: string;
  /** Whether `body` is a whole Lean file (auxiliaries, then the theorem) rather than a proof body. */
  wholeFile: boolean;
}

/** A Markdown code fence (not Lean): its info string and its text. */
const FENCE = /```([^\n`]*)\n([\s\S]*?)(?:```|$)/g;

/** Undefined when the completion holds no proof text (still thinking, or only comments). */
export function extractProof(completion: string, theoremName: string, format: ProofFormat = "body"): ExtractedProof | undefined {
  const afterThinking = answerPart(completion);
  if (afterThinking === undefined) return undefined;
  const code = lastLeanBlock(afterThinking) ?? afterThinking;
  if (blankNonCode(code).trim() === "") return undefined;
  if (format !== "body" && readsAsWholeFile(code, format)) {
    const file = code.trim();
    return { body: file, code: blankNonCode(file), wholeFile: true };
  }
  const body = proofBody(code, theoremName);
  if (body === undefined) return undefined;
  // ":= by" with nothing after it is no proof either.
  const tokens = codeTokens(body);
  const empty = tokens.length === 0 || (tokens.length === 1 && tokens[0]!.text === "by");
  return empty ? undefined : { body, code: blankNonCode(body), wholeFile: false };
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
  const tokens = codeTokens(code);
  const declarations = theoremDeclarations(tokens);
  if (declarations.length === 0) return bareBody(code);
  const chosen = declarations.find((d) => d.name === theoremName || d.name.endsWith(`.${theoremName}`)) ?? declarations.at(-1)!;
  const assign = topLevelAssign(tokens, chosen.afterName);
  if (assign < 0) return undefined;
  const next = nextCommandAtLineStart(code, tokens, assign + 1);
  return code.slice(tokens[assign]!.end, next < tokens.length ? tokens[next]!.start : code.length).trim();
}

/**
 * Text with no declaration continues a prompt that ended in the statement: a
 * leading ":=" is dropped, and bare tactics are put under `by`.
 */
function bareBody(code: string): string {
  const first = codeTokens(code)[0];
  const text = (first?.text === ":=" ? code.slice(first.end) : code).replace(/\s+$/, "");
  if (codeTokens(text)[0]?.text === "by") return text.trim();
  const lines = text.split("\n");
  while (lines.length > 0 && lines[0]!.trim() === "") lines.shift();
  const indent = Math.min(...lines.filter((line) => line.trim() !== "").map((line) => line.length - line.trimStart().length));
  return `by\n${lines.map((line) => (line.trim() === "" ? "" : `  ${line.slice(indent)}`)).join("\n")}`;
}
