// The policy's adapter for a model: LoRA on its linear layers and, with a reasoning
// vocabulary whose rows train, those rows as PEFT trainable tokens, starting from the
// expanded model's copies (docs/concepts/reasoning-vocabulary.md, "What trains").
import * as tf from "@tensorflow/tfjs-core";
import { LoraAdapter, type CausalLM, type LoraConfig, type TokenRowsInit } from "@lean-grpo/lm";

/** The expanded model's reasoning rows, as a new adapter's trainable token rows start. */
function tokenRowsOf(model: CausalLM): TokenRowsInit {
  const start = model.reasoning!.standardSize;
  const rows = (matrix: tf.Tensor2D) => tf.slice(matrix, [start, 0], [matrix.shape[0] - start, matrix.shape[1]]);
  return { start, embedding: rows(model.weights.embedding), head: model.config.tieWordEmbeddings ? null : rows(model.weights.head) };
}

/** A new adapter for the model: LoRA, plus the reasoning rows when they train. */
export function createPolicyAdapter(model: CausalLM, lora: LoraConfig, seed: number, rows: "train" | "frozen" | undefined): LoraAdapter {
  if (!model.reasoning || rows === "frozen") return LoraAdapter.create(model.config, lora, seed);
  const init = tokenRowsOf(model);
  try {
    return LoraAdapter.create(model.config, lora, seed, init);
  } finally {
    init.embedding.dispose();
    init.head?.dispose();
  }
}
