// A model's tokenizer from its Hugging Face files: tokenizer.json (through
// @huggingface/tokenizers, whose ids match the Rust tokenizers for Qwen's BPE) and
// tokenizer_config.json (special tokens and the chat template, which may also sit in
// chat_template.jinja, as newer transformers save it).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { TokenizerError } from "../errors.js";
import { ChatTemplate, type ChatMessage, type ChatTemplateOptions } from "./chat-template.js";

const SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "pad_token", "unk_token"] as const;

async function readJson(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new TokenizerError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not a JSON object");
    return value as Record<string, unknown>;
  } catch (error) {
    throw new TokenizerError(`${file} is not a valid JSON object (${(error as Error).message})`);
  }
}

async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return null;
  }
}

/** A special token in tokenizer_config.json is a string or an AddedToken object {content, ...}. */
function tokenText(value: unknown, key: string): string | null {
  if (value == null) return null;
  if (typeof value === "string") return value;
  if (typeof value === "object" && typeof (value as { content?: unknown }).content === "string") return (value as { content: string }).content;
  throw new TokenizerError(`tokenizer_config.json "${key}" must be a string or {"content": ...}`);
}

/** The template source: chat_template.jinja, else tokenizer_config's string, or its "default" entry of a list. */
function templateSource(config: Record<string, unknown>, file: string | null): string | null {
  if (file !== null) return file;
  const value = config.chat_template;
  if (value == null) return null;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const entry = value.find((t) => (t as { name?: unknown })?.name === "default") as { template?: unknown } | undefined;
    if (typeof entry?.template === "string") return entry.template;
  }
  throw new TokenizerError('tokenizer_config.json "chat_template" must be a string or a list with a {"name": "default"} entry');
}

export class ModelTokenizer {
  private constructor(
    private readonly tokenizer: Tokenizer,
    /** bos/eos/pad/unk token text, null when the model has none. */
    readonly specialTokens: Record<(typeof SPECIAL_TOKEN_KEYS)[number], string | null>,
    private readonly chatTemplate: ChatTemplate | null,
  ) {}

  static async load(directory: string): Promise<ModelTokenizer> {
    const tokenizerJson = await readJson(path.join(directory, "tokenizer.json"));
    const config = await readJson(path.join(directory, "tokenizer_config.json"));
    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(tokenizerJson, config);
    } catch (error) {
      throw new TokenizerError(`${path.join(directory, "tokenizer.json")} cannot be used: ${(error as Error).message}`);
    }
    const specialTokens = Object.fromEntries(SPECIAL_TOKEN_KEYS.map((key) => [key, tokenText(config[key], key)])) as ModelTokenizer["specialTokens"];
    const source = templateSource(config, await readOptional(path.join(directory, "chat_template.jinja")));
    return new ModelTokenizer(tokenizer, specialTokens, source === null ? null : new ChatTemplate(source, specialTokens));
  }

  /** Token ids of a text; special tokens written in the text become their ids. */
  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: options.addSpecialTokens ?? true }).ids;
  }

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return ""; // the library refuses an empty list
    return this.tokenizer.decode([...ids], { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  /** The id of a token's text (e.g. "<|im_end|>"), or undefined. */
  tokenId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  /** Id of the token that ends a turn: the eos_token of tokenizer_config.json. */
  get eosTokenId(): number | undefined {
    return this.specialTokens.eos_token === null ? undefined : this.tokenId(this.specialTokens.eos_token);
  }

  get padTokenId(): number | undefined {
    return this.specialTokens.pad_token === null ? undefined : this.tokenId(this.specialTokens.pad_token);
  }

  /** Number of ids the tokenizer can produce (base vocabulary plus added tokens). */
  get vocabularySize(): number {
    return this.tokenizer.get_vocab(true).size;
  }

  get hasChatTemplate(): boolean {
    return this.chatTemplate !== null;
  }

  /** The prompt text of a conversation, as apply_chat_template(tokenize=False) gives it. */
  applyChatTemplate(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): string {
    if (!this.chatTemplate) throw new TokenizerError("this tokenizer has no chat template (tokenizer_config.json chat_template or chat_template.jinja)");
    return this.chatTemplate.render(messages, options);
  }

  /** The prompt ids of a conversation, as apply_chat_template(tokenize=True) gives them. */
  encodeChat(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): number[] {
    // The template already writes every special token; adding more would double them.
    return this.encode(this.applyChatTemplate(messages, options), { addSpecialTokens: false });
  }
}
