// The tokenizer and chat template alone, without tfjs: what a vLLM proxy or a data script needs.
export { TokenizerError } from "../errors.js";
export { ChatTemplate, type ChatMessage, type ChatTemplateOptions } from "./chat-template.js";
export { ModelTokenizer } from "./model-tokenizer.js";
export {
  PROMPT_FORMAT_FILE,
  PROMPT_FORMAT_KEYS,
  promptFormatJson,
  readModelPromptFormat,
  type ModelPromptFormat,
  type PromptFormatKey,
} from "./prompt-format.js";
