// The real REPL traffic in ./transcripts (leanprover-community/repl's own tests):
// NAME.in holds requests, NAME.expected.out the responses, in order. Requests are
// split the way the REPL reads them (REPL/Main.lean `getLines`): lines up to a blank
// one, each right-trimmed, concatenated with no separator.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const TRANSCRIPTS_DIR = fileURLToPath(new URL("./transcripts/", import.meta.url));

export interface Transcript {
  /** e.g. "tactic_sorry" or "mathlib/H20231115_3". */
  name: string;
  /** Request texts exactly as the REPL assembles them. */
  requests: string[];
  /** Response texts (Lean's pretty-printed JSON), one per request. */
  responses: string[];
}

/** Splits REPL input into queries the way the REPL does. */
export function splitRequests(text: string): string[] {
  const queries: string[] = [];
  let lines: string[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") {
      if (lines.length > 0) queries.push(lines.join(""));
      lines = [];
    } else {
      lines.push(line.trimEnd());
    }
  }
  if (lines.length > 0) queries.push(lines.join(""));
  return queries;
}

/** Splits REPL output into responses: each is followed by a blank line. */
export function splitResponses(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((response) => response.trim())
    .filter((response) => response !== "");
}

/** Every transcript that has both requests and expected responses. */
export function loadTranscripts(dir = TRANSCRIPTS_DIR): Transcript[] {
  const names = [
    ...readdirSync(dir).filter((f) => f.endsWith(".in")),
    ...readdirSync(`${dir}mathlib`)
      .filter((f) => f.endsWith(".in"))
      .map((f) => `mathlib/${f}`),
  ].map((file) => file.slice(0, -".in".length));
  return names.flatMap((name) => {
    const out = `${dir}${name}.expected.out`;
    if (!existsSync(out)) return [];
    const requests = splitRequests(readFileSync(`${dir}${name}.in`, "utf8"));
    const responses = splitResponses(readFileSync(out, "utf8"));
    if (requests.length !== responses.length) {
      throw new Error(`transcript ${name}: ${requests.length} requests but ${responses.length} responses`);
    }
    return [{ name, requests, responses }];
  });
}

/** One response of a transcript, parsed. */
export function transcriptResponse(name: string, index: number, dir = TRANSCRIPTS_DIR): unknown {
  const responses = splitResponses(readFileSync(`${dir}${name}.expected.out`, "utf8"));
  const response = responses[index];
  if (response === undefined) throw new Error(`transcript ${name} has no response #${index} (it has ${responses.length})`);
  return JSON.parse(response);
}
