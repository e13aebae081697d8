// A model's tokenizer from its Hugging Face files: tokenizer.json (through
// @huggingface/tokenizers, whose ids match the Rust tokenizers for Qwen's BPE) and
// tokenizer_config.json (special tokens and the chat template, which may also sit in
// chat_template.jinja, as newer transformers save it, or in a processor's chat_template.json).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { TokenizerError } from "../errors.js";
import { ChatTemplate, type ChatMessage, type ChatTemplateOptions } from "./chat-template.js";

const SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "pad_token", "unk_token"] as const;

/**
 * Stands in for a missing unk_token while encoding: the library's BPE drops a piece it has no
 * token for when the model has no unk_token (as the Rust tokenizers do), which would silently
 * change the prompt. With this in place the piece comes out as a token without an id instead,
 * and encode() refuses the text. No vocabulary holds it (it is not well-formed UTF-16).
 */
const NO_TOKEN = "\uDFFF<no token in the vocabulary>\uD800";

/** A character as a message names it: "ℕ" (U+2115). */
function describeCharacter(char: string): string {
  return `${JSON.stringify(char)} (U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")})`;
}

/** Up to `width` characters either side of position `index` (in UTF-16 units), for a message. */
function excerpt(text: string, index: number, length: number, width = 16): string {
  let start = Math.max(0, index - width);
  let end = Math.min(text.length, index + length + width);
  if (/[\uDC00-\uDFFF]/.test(text[start] ?? "")) start--; // keep surrogate pairs whole
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? "")) end++;
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`;
}

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
  if (typeof value === "object" && typeof (value as { content?: unknown }).content === "string")
    return (value as { content: string }).content;
  throw new TokenizerError(`tokenizer_config.json "${key}" must be a string or {"content": ...}`);
}

/**
 * chat_template.json's template (`{"chat_template": "..."}`, as transformers' processors save it);
 * null when there is no such file.
 */
function jsonTemplate(text: string | null, file: string): string | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TokenizerError(`${file} is not valid JSON (${(error as Error).message})`);
  }
  const template = (value as { chat_template?: unknown } | null)?.chat_template;
  if (typeof template !== "string") throw new TokenizerError(`${file} must be {"chat_template": "<the template>"}`);
  return template;
}

/**
 * The template source, where transformers looks for it: chat_template.jinja, else
 * chat_template.json, else tokenizer_config's string, or its "default" entry of a list.
 */
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

/**
 * The library reads model.unk_token for BPE, WordPiece and Unigram, but models it has no class
 * for (WordLevel) fall back to one that takes the unk_token of tokenizer_config.json instead.
 * tokenizer.json's own model.unk_token is the one Hugging Face tokenizers use: make it the unk.
 */
function useDeclaredUnkToken(tokenizer: Tokenizer, declared: string | null): void {
  const model = tokenizer.model;
  if (declared === null || model == null || model.unk_token_id !== undefined) return;
  const id = tokenizer.get_vocab(true).get(declared);
  if (id === undefined) return; // refused when a text needs it (see encode)
  model.unk_token = declared;
  model.unk_token_id = id;
}

export class ModelTokenizer {
  private constructor(
    private readonly tokenizer: Tokenizer,
    /** bos/eos/pad/unk token text, null when the model has none. */
    readonly specialTokens: Record<(typeof SPECIAL_TOKEN_KEYS)[number], string | null>,
    private readonly chatTemplate: ChatTemplate | null,
    /** Where the tokenizer was loaded from, for messages. */
    private readonly directory: string,
    /** The model's unk_token (tokenizer.json model.unk_token), null when it has none. */
    private readonly unkToken: string | null,
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
    const declared = (tokenizerJson.model as { unk_token?: unknown } | undefined)?.unk_token;
    const unkToken = typeof declared === "string" ? declared : (tokenizer.model?.unk_token ?? null);
    useDeclaredUnkToken(tokenizer, unkToken);
    const specialTokens = Object.fromEntries(
      SPECIAL_TOKEN_KEYS.map((key) => [key, tokenText(config[key], key)]),
    ) as ModelTokenizer["specialTokens"];
    const jsonFile = path.join(directory, "chat_template.json");
    const source = templateSource(
      config,
      (await readOptional(path.join(directory, "chat_template.jinja"))) ?? jsonTemplate(await readOptional(jsonFile), jsonFile),
    );
    return new ModelTokenizer(
      tokenizer,
      specialTokens,
      source === null ? null : new ChatTemplate(source, specialTokens),
      directory,
      unkToken,
    );
  }

  /**
   * Token ids of a text; special tokens written in the text become their ids. A piece the
   * vocabulary has no token for becomes the model's unk_token (tokenizer.json model.unk_token),
   * or its bytes' tokens with BPE byte_fallback, as Hugging Face tokenizers do; a model with
   * neither cannot encode it, and the text is refused with a TokenizerError naming the character
   * and where it is (rather than dropping it, which would change the prompt unseen).
   */
  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    const ids = this.encodeRaw(text, options.addSpecialTokens ?? true);
    if (ids.some((id) => !Number.isInteger(id))) this.refuseUnencodable(text);
    return ids as number[];
  }

  /** The library's ids, an unknown piece without unk_token given as undefined rather than dropped. */
  private encodeRaw(text: string, addSpecialTokens: boolean): Array<number | undefined> {
    const model = this.tokenizer.model;
    const unk = model?.unk_token;
    if (model == null || unk != null) return this.tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids;
    model.unk_token = NO_TOKEN;
    try {
      return this.tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids;
    } finally {
      model.unk_token = unk; // null or undefined, as the library set it
    }
  }

  /** Throws the TokenizerError for a text with a piece this vocabulary cannot encode. */
  private refuseUnencodable(text: string): never {
    const unk = this.unkToken;
    const why =
      unk === null
        ? "has no token for it, and the model has neither an unk_token nor byte_fallback to stand in (tokenizer.json model.unk_token is null)"
        : `has no token for it, and the model's unk_token ${JSON.stringify(unk)} (tokenizer.json model.unk_token) is not in the vocabulary either`;
    const found = this.firstUnencodable(text);
    const where = found
      ? `${describeCharacter(found.char)} at index ${found.position} of the text (code points from 0; near ${JSON.stringify(excerpt(text, found.index, found.char.length))})`
      : `a piece of ${JSON.stringify(excerpt(text, 0, text.length, 40))}`;
    throw new TokenizerError(`cannot encode ${where}: the vocabulary of the tokenizer in ${this.directory} ${why}`);
  }

  /** The first character that, on its own, has no token; added tokens written in the text are skipped. */
  private firstUnencodable(text: string): { char: string; index: number; position: number } | undefined {
    const added = [...this.tokenizer.get_added_tokens_decoder().values()].map((t) => t.content).filter((c) => c.length > 0);
    const known = new Map<string, boolean>();
    let position = 0;
    for (let index = 0; index < text.length; position++) {
      const token = added.filter((c) => text.startsWith(c, index)).sort((a, b) => b.length - a.length)[0];
      if (token !== undefined) {
        index += token.length;
        position += [...token].length - 1;
        continue;
      }
      const char = String.fromCodePoint(text.codePointAt(index)!);
      let encodable = known.get(char);
      if (encodable === undefined) {
        encodable = this.encodeRaw(char, false).every((id) => Number.isInteger(id));
        known.set(char, encodable);
      }
      if (!encodable) return { char, index, position };
      index += char.length;
    }
    return undefined;
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
    if (!this.chatTemplate)
      throw new TokenizerError(
        "this tokenizer has no chat template (tokenizer_config.json chat_template, chat_template.jinja or chat_template.json)",
      );
    return this.chatTemplate.render(messages, options);
  }

  /** The prompt ids of a conversation, as apply_chat_template(tokenize=True) gives them. */
  encodeChat(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): number[] {
    // The template already writes every special token; adding more would double them.
    return this.encode(this.applyChatTemplate(messages, options), { addSpecialTokens: false });
  }
}
