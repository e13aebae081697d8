// The shipped model's tokenizer: characters (printable ASCII, newline, × ÷ −) plus a few
// whole words of the arithmetic prompts, as a Hugging Face BPE tokenizer.json, and
// Qwen's special tokens with a ChatML chat template in tokenizer_config.json.
//
// Why BPE with no pre-tokenizer: every character is a base token and the merges only
// build the listed words, so any text made of these characters round-trips exactly
// (the Fuse decoder joins tokens without adding spaces).

export const SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] as const;

const CHARACTERS = ["\n", ...Array.from({ length: 126 - 32 + 1 }, (_, i) => String.fromCharCode(32 + i)), "×", "÷", "−"];

/** Words (and word pieces) the prompts and solutions use often, each one token. */
const WORDS = ["What", " is", "Answer", "\\boxed{", "user", "assistant", "system", "<think>", "</think>"];

/** The merges that build `word` left to right: "W h", "Wh a", "Wha t". */
function mergesOf(word: string): [string, string][] {
  const chars = [...word];
  const merges: [string, string][] = [];
  let prefix = chars[0]!;
  for (const char of chars.slice(1)) {
    merges.push([prefix, char]);
    prefix += char;
  }
  return merges;
}

/** ChatML, as Qwen2's template writes it (without its default system prompt). */
export const CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

export interface TokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  vocabularySize: number;
  /** Ids of the special tokens, by their text. */
  specialIds: Record<(typeof SPECIAL_TOKENS)[number], number>;
}

export function buildArithTokenizer(): TokenizerFiles {
  const vocab: Record<string, number> = {};
  const add = (token: string) => {
    if (!(token in vocab)) vocab[token] = Object.keys(vocab).length;
  };
  const merges: [string, string][] = [];
  for (const char of CHARACTERS) add(char);
  for (const word of WORDS) {
    for (const [left, right] of mergesOf(word)) {
      if (!(left + right in vocab)) merges.push([left, right]);
      add(left + right);
    }
  }
  const firstSpecial = Object.keys(vocab).length;
  const specialIds = Object.fromEntries(SPECIAL_TOKENS.map((token, i) => [token, firstSpecial + i])) as TokenizerFiles["specialIds"];
  const tokenizerJson = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content) => ({
      id: specialIds[content],
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: null,
    post_processor: null,
    decoder: { type: "Fuse" },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
  const tokenizerConfig = {
    tokenizer_class: "PreTrainedTokenizerFast",
    model_max_length: 256,
    bos_token: null,
    eos_token: "<|im_end|>",
    pad_token: "<|endoftext|>",
    unk_token: null,
    additional_special_tokens: ["<|im_start|>", "<|im_end|>"],
    clean_up_tokenization_spaces: false,
    split_special_tokens: false,
    chat_template: CHAT_TEMPLATE,
  };
  return { tokenizerJson, tokenizerConfig, vocabularySize: firstSpecial + SPECIAL_TOKENS.length, specialIds };
}
