// The lexer against real Lean source: the REPL's own test inputs (toolchain
// v4.33.0-rc2; tests/fakes/lean-repl/transcripts). Lean's answers give independent
// checks: every `sorry` it reports starts at a token `sorry`, and every tactic of
// `allTactics` starts at a token and ends where a token ends.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tokenize } from "../src/index.js";
import { replQueries, TRANSCRIPTS } from "./support/repl-transcripts.js";

interface Position {
  line: number;
  column: number;
}

/** UTF-16 index of a REPL position (1-based line, column in code points). */
function indexOf(source: string, { line, column }: Position): number {
  const lines = source.split("\n");
  let index = 0;
  for (let l = 1; l < line; l++) index += lines[l - 1]!.length + 1;
  return (
    index +
    Array.from(lines[line - 1]!)
      .slice(0, column)
      .join("").length
  );
}

const files = (dir: string) => readdirSync(join(TRANSCRIPTS, dir)).map((f) => join(dir, f));
const all = [...files("."), ...files("mathlib")];

/** Every Lean text of the transcripts: the commands of the requests, and the .lean files. */
const sources = all.flatMap((file) => {
  if (file.endsWith(".lean")) return [{ name: file, text: readFileSync(join(TRANSCRIPTS, file), "utf8"), answer: undefined }];
  if (!file.endsWith(".in")) return [];
  const answers = (() => {
    try {
      return replQueries(readFileSync(join(TRANSCRIPTS, file.replace(/\.in$/, ".expected.out")), "utf8")).map((a) => JSON.parse(a));
    } catch {
      return [];
    }
  })();
  return replQueries(readFileSync(join(TRANSCRIPTS, file), "utf8")).flatMap((query, i) => {
    const request = JSON.parse(query) as { cmd?: string; tactic?: string };
    const text = request.cmd ?? request.tactic;
    return text === undefined ? [] : [{ name: `${file}#${i}`, text, answer: answers[i] }];
  });
});

describe("tokenize on the REPL transcripts", () => {
  it("finds a good number of Lean texts", () => {
    expect(sources.length).toBeGreaterThan(80);
  });

  it("lexes every text without error, tokens in order, and only whitespace between them", () => {
    for (const { name, text } of sources) {
      const { tokens, error } = tokenize(text);
      expect(error, name).toBeUndefined();
      let at = 0;
      for (const token of tokens) {
        expect(text.slice(at, token.start).trim(), `${name} before ${token.text}`).toBe("");
        expect(text.slice(token.start, token.end)).toBe(token.text);
        at = token.end;
      }
      expect(text.slice(at).trim(), name).toBe("");
    }
  });

  it("puts a token `sorry` where Lean reports each sorry", () => {
    let checked = 0;
    for (const { name, text, answer } of sources) {
      for (const sorry of answer?.sorries ?? []) {
        if (!sorry.pos || answer.proofState !== undefined) continue;
        const index = indexOf(text, sorry.pos);
        if (sorry.endPos && sorry.endPos.line === sorry.pos.line && sorry.endPos.column === sorry.pos.column) continue; // rootGoals
        const token = tokenize(text).tokens.find((t) => t.start === index);
        expect(token?.text, `${name} at ${JSON.stringify(sorry.pos)}`).toBe("sorry");
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5);
  });

  it("starts and ends every tactic Lean reports on token boundaries", () => {
    let checked = 0;
    for (const { name, text, answer } of sources) {
      const tokens = tokenize(text).tokens;
      for (const tactic of answer?.tactics ?? []) {
        const start = indexOf(text, tactic.pos);
        const end = indexOf(text, tactic.endPos);
        expect(
          tokens.some((t) => t.start === start),
          `${name}: ${tactic.tactic}`,
        ).toBe(true);
        expect(
          tokens.some((t) => t.end === end),
          `${name}: ${tactic.tactic}`,
        ).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5);
  });
});
