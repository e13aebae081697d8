// A character-level tokenizer written for a test, shaped like models/arith-tiny's (BPE over
// single characters with a few merges, no normalizer or pre-tokenizer, a Fuse decoder and the
// ChatML tokens), with the unknown-piece handling of the model as options; or a WordLevel one
// over single characters, like the orchestrator tests' tiny model.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

export const CHAR_TOKENIZER_ALPHABET = [..."\n !()+,-.0123456789:<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz|"];

export interface CharTokenizerOptions {
  /** tokenizer.json model.unk_token (null: none). */
  unkToken?: string | null;
  /** Whether unkToken is also in the vocabulary (true unless said otherwise). */
  unkInVocab?: boolean;
  /** BPE byte_fallback, with a byte token <0xNN> in the vocabulary for each of these bytes. */
  fallbackBytes?: number[];
  /** tokenizer.json model.fuse_unk. */
  fuseUnk?: boolean;
  /** The model type: BPE (default) or WordLevel (one token per character, split by a regex pre-tokenizer). */
  type?: "BPE" | "WordLevel";
}

/** Writes tokenizer.json and tokenizer_config.json into `dir`; returns `dir`. */
export async function writeCharTokenizer(dir: string, options: CharTokenizerOptions = {}): Promise<string> {
  const unkToken = options.unkToken ?? null;
  const pieces = [...CHAR_TOKENIZER_ALPHABET];
  if (unkToken !== null && (options.unkInVocab ?? true)) pieces.unshift(unkToken);
  for (const byte of options.fallbackBytes ?? []) pieces.push(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`);
  const wordLevel = options.type === "WordLevel";
  const merges = wordLevel
    ? []
    : [
        ["t", "h"],
        ["th", "e"],
        ["o", "r"],
      ];
  for (const [a, b] of merges) pieces.push(a! + b!);
  const vocab = Object.fromEntries(pieces.map((piece, id) => [piece, id]));
  const special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"];
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: special.map((content, i) => ({
      id: pieces.length + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: wordLevel ? { type: "Split", pattern: { Regex: "." }, behavior: "Isolated", invert: false } : null,
    post_processor: null,
    decoder: { type: "Fuse" },
    model: wordLevel
      ? { type: "WordLevel", vocab, unk_token: unkToken }
      : {
          type: "BPE",
          dropout: null,
          unk_token: unkToken,
          continuing_subword_prefix: null,
          end_of_word_suffix: null,
          fuse_unk: options.fuseUnk ?? false,
          byte_fallback: (options.fallbackBytes?.length ?? 0) > 0,
          ignore_merges: false,
          vocab,
          merges,
        },
  };
  const config = {
    tokenizer_class: "PreTrainedTokenizerFast",
    bos_token: null,
    eos_token: "<|im_end|>",
    pad_token: "<|endoftext|>",
    chat_template:
      "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
  };
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizer));
  await writeFile(path.join(dir, "tokenizer_config.json"), JSON.stringify(config));
  return dir;
}
