// The prompt a model was made to read, kept in its own directory so that it travels with the
// model: the chat template (tokenizer_config.json `chat_template`, chat_template.jinja or
// chat_template.json, read by ModelTokenizer as transformers reads them) renders the turns, and
// prompt_format.json says what goes in them: the user turn's template for a math problem or a
// Lean theorem, and the system turn the model was trained with ("" when it saw none). A base
// model without a chat template reads the same templates as plain text.
//
//   models/arith-tiny/prompt_format.json: {"system": "", "math_template": "{problem}", ...}
//
// Its keys are the run config's `prompt.*` keys: a run that sets none of them samples the model
// with its own format; a key the file leaves out takes the run config's default.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { TokenizerError } from "../errors.js";

export const PROMPT_FORMAT_FILE = "prompt_format.json";

/** The `prompt.*` keys a model directory may fix, in the order people read them. */
export const PROMPT_FORMAT_KEYS = ["format", "system", "math_template", "lean_template", "tactic_template", "feedback_template"] as const;
export type PromptFormatKey = (typeof PROMPT_FORMAT_KEYS)[number];
export type ModelPromptFormat = Partial<Record<PromptFormatKey, string>>;

const FORMATS = ["auto", "chat", "text"];

/**
 * The prompt format of a model directory: its prompt_format.json, or {} when it has none (a
 * Hugging Face model as downloaded). A file that is there but malformed is an error naming the
 * file, the key and what is accepted, never a silent default.
 */
export function readModelPromptFormat(directory: string): ModelPromptFormat {
  const file = path.join(directory, PROMPT_FORMAT_FILE);
  if (!existsSync(file)) return {};
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new TokenizerError(`${file} is not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new TokenizerError(`${file} must be a JSON object of prompt keys (${PROMPT_FORMAT_KEYS.join(", ")})`);
  const format: ModelPromptFormat = {};
  for (const [key, entry] of Object.entries(value)) {
    if (!(PROMPT_FORMAT_KEYS as readonly string[]).includes(key))
      throw new TokenizerError(`${file}: unknown key "${key}"; accepted: ${PROMPT_FORMAT_KEYS.join(", ")}`);
    if (typeof entry !== "string") throw new TokenizerError(`${file}: "${key}" must be a string`);
    if (key === "format" && !FORMATS.includes(entry))
      throw new TokenizerError(`${file}: "format" is ${JSON.stringify(entry)}; accepted: ${FORMATS.join(", ")}`);
    format[key as PromptFormatKey] = entry;
  }
  return format;
}

/** prompt_format.json's text for a format (what `lean-grpo sft` writes beside the model it saves). */
export function promptFormatJson(format: ModelPromptFormat): string {
  const ordered = Object.fromEntries(PROMPT_FORMAT_KEYS.filter((k) => format[k] !== undefined).map((k) => [k, format[k]]));
  return `${JSON.stringify(ordered, null, 2)}\n`;
}
