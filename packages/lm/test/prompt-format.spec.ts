// A model directory's prompt_format.json: the prompt keys the model was made for, read as
// given, and every way the file can be wrong named with the file, the key and what is accepted.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { PROMPT_FORMAT_FILE, promptFormatJson, readModelPromptFormat } from "../src/tokenizer/prompt-format.js";

const root = mkdtempSync(path.join(tmpdir(), "prompt-format-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
function modelWith(text: string | undefined): string {
  const dir = path.join(root, `m${n++}`);
  mkdirSync(dir);
  if (text !== undefined) writeFileSync(path.join(dir, PROMPT_FORMAT_FILE), text);
  return dir;
}

describe("readModelPromptFormat", () => {
  it("reads the shipped model's: the bare problem as the user turn, no system turn", () => {
    expect(readModelPromptFormat(fileURLToPath(new URL("../../../models/arith-tiny", import.meta.url)))).toEqual({
      system: "",
      math_template: "{problem}",
      feedback_template: "{feedback} {problem}",
    });
  });

  it("is empty for a model directory without the file (a Hugging Face model as downloaded)", () => {
    expect(readModelPromptFormat(modelWith(undefined))).toEqual({});
  });

  it("writes what it reads", () => {
    const format = { system: "You are a prover.", lean_template: "{statement} := by\n", format: "chat" };
    expect(readModelPromptFormat(modelWith(promptFormatJson(format)))).toEqual(format);
    expect(promptFormatJson(format)).toBe(
      '{\n  "format": "chat",\n  "system": "You are a prover.",\n  "lean_template": "{statement} := by\\n"\n}\n',
    );
  });

  it("refuses a malformed file, naming the file, the key and what is accepted", () => {
    expect(() => readModelPromptFormat(modelWith("{"))).toThrow(/prompt_format\.json is not valid JSON/);
    expect(() => readModelPromptFormat(modelWith("[]"))).toThrow(
      /prompt_format\.json must be a JSON object of prompt keys \(format, system,/,
    );
    expect(() => readModelPromptFormat(modelWith('{"template": "{problem}"}'))).toThrow(
      /prompt_format\.json: unknown key "template"; accepted: format, system, math_template, lean_template, tactic_template, feedback_template/,
    );
    expect(() => readModelPromptFormat(modelWith('{"system": null}'))).toThrow(/prompt_format\.json: "system" must be a string/);
    expect(() => readModelPromptFormat(modelWith('{"format": "jinja"}'))).toThrow(
      /prompt_format\.json: "format" is "jinja"; accepted: auto, chat, text/,
    );
  });
});
