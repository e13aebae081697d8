// Writes the shipped model's starting point: a Qwen2 config sized for 2 CPU cores, its
// tokenizer, and seeded random weights (what `lean-grpo sft` then warm-starts).
//   npx tsx scripts/arith/init-model.ts --out DIR [--seed N]
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { expectedWeights, parseModelConfig, SeededRandom, serializeSafetensors } from "@lean-grpo/lm";
import { buildArithTokenizer } from "./arith-tokenizer.js";

export function arithModelConfig(vocabSize: number, eosTokenId: number, padTokenId: number): Record<string, unknown> {
  return {
    architectures: ["Qwen2ForCausalLM"],
    model_type: "qwen2",
    hidden_size: 128,
    intermediate_size: 512,
    num_hidden_layers: 4,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    hidden_act: "silu",
    max_position_embeddings: 256,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: true,
    vocab_size: vocabSize,
    bos_token_id: null,
    eos_token_id: eosTokenId,
    pad_token_id: padTokenId,
    use_sliding_window: false,
    sliding_window: null,
    attention_dropout: 0,
    initializer_range: 0.02,
    torch_dtype: "float32",
  };
}

/** Normal samples by Box–Muller from the seeded uniform generator. */
function normals(random: SeededRandom, count: number, std: number): Float32Array {
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const radius = Math.sqrt(-2 * Math.log(1 - random.next())) * std;
    const angle = 2 * Math.PI * random.next();
    out[i] = radius * Math.cos(angle);
    if (i + 1 < count) out[i + 1] = radius * Math.sin(angle);
  }
  return out;
}

/** Normal std of every matrix, as transformers' initializer_range (the warm start trains every weight, `sft --full`). */
const INIT_STD = 0.02;

export function writeInitialModel(out: string, seed: number): void {
  const tokenizer = buildArithTokenizer();
  const raw = arithModelConfig(tokenizer.vocabularySize, tokenizer.specialIds["<|im_end|>"], tokenizer.specialIds["<|endoftext|>"]);
  const config = parseModelConfig(raw);
  const random = new SeededRandom(seed);
  const tensors = [...expectedWeights(config)].map(([name, shape]) => {
    const count = shape.reduce((a, b) => a * b, 1);
    const data = name.endsWith("norm.weight")
      ? new Float32Array(count).fill(1)
      : name.endsWith(".bias")
        ? new Float32Array(count)
        : normals(random, count, INIT_STD);
    return { name, shape, data };
  });
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, "config.json"), `${JSON.stringify(raw, null, 2)}\n`);
  writeFileSync(
    path.join(out, "generation_config.json"),
    `${JSON.stringify(
      {
        eos_token_id: raw.eos_token_id,
        pad_token_id: raw.pad_token_id,
        do_sample: false,
        max_new_tokens: 32,
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(path.join(out, "tokenizer.json"), `${JSON.stringify(tokenizer.tokenizerJson, null, 2)}\n`);
  writeFileSync(path.join(out, "tokenizer_config.json"), `${JSON.stringify(tokenizer.tokenizerConfig, null, 2)}\n`);
  writeFileSync(path.join(out, "model.safetensors"), serializeSafetensors(tensors, { format: "pt" }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { out: { type: "string" }, seed: { type: "string", default: "0" } } });
  if (!values.out) throw new Error("--out DIR is required: where to write the random-initialised model");
  writeInitialModel(values.out, Number(values.seed));
  process.stdout.write(`wrote ${values.out}\n`);
}
