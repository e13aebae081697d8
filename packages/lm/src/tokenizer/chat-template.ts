// A model's chat template, rendered as transformers' apply_chat_template renders it:
// @huggingface/jinja sets up the same environment (trim_blocks, lstrip_blocks,
// raise_exception, strftime_now, tojson), and the context carries the messages, the tools,
// add_generation_prompt, the special tokens and any extra template variables
// (e.g. enable_thinking).
import { Template } from "@huggingface/jinja";
import { TokenizerError } from "../errors.js";

export interface ChatMessage {
  role: string;
  content: string | null;
  /** Other fields templates read: tool_calls, reasoning_content, name, ... */
  [field: string]: unknown;
}

export interface ChatTemplateOptions {
  /** End with the opening of an assistant turn. */
  addGenerationPrompt?: boolean;
  /** Tool (function) definitions, as OpenAI-style JSON schemas. */
  tools?: unknown[];
  /** Extra template variables, e.g. { enable_thinking: false }. */
  variables?: Record<string, unknown>;
}

export class ChatTemplate {
  private readonly template: Template;

  constructor(
    readonly source: string,
    /** bos_token, eos_token, pad_token, unk_token as the template sees them. */
    private readonly specialTokens: Record<string, string | null>,
  ) {
    try {
      this.template = new Template(source);
    } catch (error) {
      throw new TokenizerError(`the chat template does not parse: ${(error as Error).message}`);
    }
  }

  render(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): string {
    if (messages.length === 0) throw new TokenizerError("a chat needs at least one message");
    try {
      return this.template.render({
        ...this.specialTokens,
        ...options.variables,
        messages,
        tools: options.tools ?? null,
        add_generation_prompt: options.addGenerationPrompt ?? false,
      });
    } catch (error) {
      throw new TokenizerError(`the chat template failed to render: ${(error as Error).message}`);
    }
  }
}
