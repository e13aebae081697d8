// A tiny random Qwen2 model with a character-level tokenizer over digits, operators,
// \boxed{} and a few words: enough for the loop to sample, score and train for real in seconds.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expectedWeights, parseModelConfig, SeededRandom, serializeSafetensors } from "@lean-grpo/lm";

const SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"];
const CHARS = [..."0123456789+-*/=()\\{}boxedPutfinalswrhinaAQ:. \n"];

/** `extraChars` widen the vocabulary (e.g. for Lean text); a character outside it becomes the unk token " ". */
export async function writeTinyModel(dir: string, seed = 1, extraChars = ""): Promise<string> {
  await mkdir(dir, { recursive: true });
  const chars = [...new Set([...CHARS, ...extraChars])];
  const vocab: Record<string, number> = {};
  [...SPECIAL, ...chars].forEach((token, id) => (vocab[token] = id));
  const vocabSize = Object.keys(vocab).length;
  const config = {
    architectures: ["Qwen2ForCausalLM"],
    model_type: "qwen2",
    hidden_size: 32,
    intermediate_size: 48,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    vocab_size: vocabSize,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    max_position_embeddings: 256,
    tie_word_embeddings: true,
    use_sliding_window: false,
    hidden_act: "silu",
    bos_token_id: 0,
    eos_token_id: 2,
    torch_dtype: "float32",
  };
  await writeFile(path.join(dir, "config.json"), JSON.stringify(config));
  const random = new SeededRandom(seed);
  const tensors = [...expectedWeights(parseModelConfig(config))].map(([name, shape]) => {
    const size = shape.reduce((a, b) => a * b, 1);
    const norm = name.endsWith("norm.weight");
    return { name, shape, data: Float32Array.from({ length: size }, () => (norm ? 1 : (random.next() - 0.5) * 0.2)) };
  });
  await writeFile(path.join(dir, "model.safetensors"), serializeSafetensors(tensors));
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: { type: "Split", pattern: { Regex: "." }, behavior: "Isolated", invert: false },
    post_processor: null,
    decoder: { type: "Fuse" },
    model: { type: "WordLevel", vocab, unk_token: " " },
  };
  await writeFile(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizer));
  await writeFile(
    path.join(dir, "tokenizer_config.json"),
    JSON.stringify({ eos_token: "<|im_end|>", pad_token: "<|endoftext|>", bos_token: null }),
  );
  return dir;
}
