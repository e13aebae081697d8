// The prompt a run samples with, from the model it names: every `prompt.*` key the config
// sources leave unset takes the value of the model directory's prompt_format.json
// (packages/lm prompt-format.ts), so the shipped model is asked "{problem}" as it was trained,
// on every path that names it (a data file, a config group, eval). A key the user set to
// something else than the model's format is kept, and named in one warning before the run
// starts: a prompt the model was not made for is a choice, not an error.
import { existsSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { RunConfig_PromptSchema } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { ConfigError } from "@lean-grpo/kit";
import { PROMPT_FORMAT_FILE, PROMPT_FORMAT_KEYS, readModelPromptFormat, type PromptFormatKey } from "@lean-grpo/lm/tokenizer";
import type { RunConfigMessage } from "@lean-grpo/orchestrator";

type PromptMessage = NonNullable<RunConfigMessage["prompt"]>;

/** The message's field of each prompt key (protobuf-es names them in camelCase). */
const FIELD: Record<PromptFormatKey, keyof PromptMessage & string> = {
  format: "format",
  system: "system",
  math_template: "mathTemplate",
  lean_template: "leanTemplate",
  tactic_template: "tacticTemplate",
  feedback_template: "feedbackTemplate",
};

export interface ModelPromptResult {
  /** The prompt section to send: the run's keys, and the model's for every key the run left unset. */
  prompt: Partial<Record<PromptFormatKey, string>>;
  /** Keys taken from the model directory. */
  fromModel: PromptFormatKey[];
  /** One line naming each key the run sets to something else than the model was made for; undefined when none. */
  warning?: string;
}

/**
 * Fills the unset `prompt.*` keys of `runConfig` (in place) from the model directory's format,
 * and says where the run's prompt differs from it. A model directory that is missing is left to
 * the model check (checkModelDir); a prompt_format.json that cannot be read is a ConfigError.
 */
export function applyModelPrompt(runConfig: RunConfigMessage, modelDir: string): ModelPromptResult {
  if (!existsSync(modelDir)) return { prompt: {}, fromModel: [] };
  let format: ReturnType<typeof readModelPromptFormat>;
  try {
    format = readModelPromptFormat(modelDir);
  } catch (error) {
    throw new ConfigError([{ path: "model.dir", source: "model", message: `model.dir: ${(error as Error).message}` }]);
  }
  const prompt = runConfig.prompt ?? create(RunConfig_PromptSchema);
  const section = prompt as unknown as Record<string, string | undefined>;
  const fromModel: PromptFormatKey[] = [];
  const differs: string[] = [];
  for (const key of PROMPT_FORMAT_KEYS) {
    const model = format[key];
    if (model === undefined) continue;
    const set = section[FIELD[key]];
    if (set === undefined) {
      section[FIELD[key]] = model;
      fromModel.push(key);
    } else if (set !== model) {
      differs.push(
        key === "system" && model === ""
          ? `prompt.system is ${JSON.stringify(set)}, a system turn the model never saw`
          : `prompt.${key} is ${JSON.stringify(set)}, not the model's ${JSON.stringify(model)}`,
      );
    }
  }
  if (fromModel.length > 0) runConfig.prompt = prompt;
  const keys = Object.fromEntries(
    PROMPT_FORMAT_KEYS.flatMap((key) => (section[FIELD[key]] === undefined ? [] : [[key, section[FIELD[key]]!]])),
  );
  return {
    prompt: keys,
    fromModel,
    ...(differs.length > 0
      ? {
          warning:
            `${differs.join("; ")} (${modelDir}/${PROMPT_FORMAT_FILE} holds the prompt the model was made for): ` +
            `the run samples the prompt you set; leave ${differs.length > 1 ? "these keys" : "it"} unset to use the model's own`,
        }
      : {}),
  };
}
