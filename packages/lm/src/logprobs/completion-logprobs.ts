// Per-token logprobs and entropies of completions given their prompts: what the GRPO
// losses train on and what ComputeLogprobs returns.
//
// Prompt + completion are left-padded into one batch, so every completion ends in the last
// column and all completion tokens lie in the last C columns (C = longest completion).
// Only those columns are projected onto the vocabulary, taken with a slice (whose gradient
// is a pad, available everywhere) rather than a gather (whose gradient is not on wasm).
import * as tf from "@tensorflow/tfjs-core";
import { ModelInputError } from "../errors.js";
import type { CausalLM, ForwardOptions } from "../model/causal-lm.js";
import { leftPaddedBatch } from "../model/token-batch.js";
import { blockStates, type BlockState } from "../reasoning-vocab/reasoning-mask.js";
import type { ReasoningMaskMode } from "../reasoning-vocab/reasoning-settings.js";
import type { ReasoningVocabulary } from "../reasoning-vocab/reasoning-vocabulary.js";
import { defaultChunkRows, tokenLogprobsAndEntropy } from "./token-logprobs.js";

export interface PromptCompletion {
  promptIds: readonly number[];
  completionIds: readonly number[];
}

export interface CompletionLogprobOptions extends ForwardOptions {
  /** Logits are divided by this; default 1. */
  temperature?: number;
  /** Top-k of the sampling distribution (0, the default, keeps every token). */
  topK?: number;
  /** Top-p of the sampling distribution (1, the default, keeps every token). */
  topP?: number;
  /** Rows per vocabulary-projection chunk; default keeps a chunk's logits near 16 MiB. */
  chunkRows?: number;
  /** The reasoning mask the completions were sampled under (a function of each completion's ids). */
  reasoning?: { vocab: ReasoningVocabulary; mode: ReasoningMaskMode };
  /** The same, naming only the mode: the vocabulary is the model's (model.reasoning). */
  reasoningMask?: ReasoningMaskMode;
}

export interface CompletionLogprobs {
  /** [batch, C]: log p of completion token i of row b at column C − len_b + i; 0 elsewhere. */
  logprobs: tf.Tensor2D;
  /** [batch, C]: entropy of the (processed) distribution each completion token was drawn from; 0 elsewhere. */
  entropies: tf.Tensor2D;
  /** [batch, C]: 1 where the column holds a completion token of the row. */
  mask: tf.Tensor2D;
  /** Completion length of each row. */
  lengths: number[];
}

/** Differentiable logprobs and entropies (in the policy's LoRA variables), right-aligned in [batch, C]. */
export function completionLogprobs(
  model: CausalLM,
  sequences: readonly PromptCompletion[],
  options: CompletionLogprobOptions = {},
): CompletionLogprobs {
  const temperature = options.temperature ?? 1;
  if (!(temperature > 0) || !Number.isFinite(temperature)) {
    throw new ModelInputError(`temperature ${temperature} must be a positive number`);
  }
  sequences.forEach((s, row) => {
    if (s.promptIds.length === 0)
      throw new ModelInputError(
        `sequence ${row}: the prompt is empty; at least one prompt token is needed to score the first completion token`,
      );
    if (s.completionIds.length === 0) throw new ModelInputError(`sequence ${row}: the completion is empty`);
  });
  const batch = leftPaddedBatch(
    sequences.map((s) => [...s.promptIds, ...s.completionIds]),
    model.config,
  );
  const lengths = sequences.map((s) => s.completionIds.length);
  if (options.reasoningMask !== undefined && options.reasoningMask !== "free" && !model.reasoning && !options.reasoning) {
    throw new ModelInputError(
      `reasoning mask "${options.reasoningMask}" needs a model with a reasoning vocabulary (model.reasoning_vocab_size > 0)`,
    );
  }
  const reasoning =
    options.reasoning ?? (model.reasoning && options.reasoningMask ? { vocab: model.reasoning, mode: options.reasoningMask } : undefined);
  const window = Math.max(...lengths);
  const { length } = batch;
  // Column j's hidden state predicts the token in column j + 1.
  const targets = new Int32Array(batch.batch * window);
  const mask = new Float32Array(batch.batch * window);
  // Block state each completion token was sampled in; padding columns are "before" (unmasked by gated).
  const states: BlockState[] | undefined = reasoning ? new Array<BlockState>(batch.batch * window).fill("before") : undefined;
  for (let row = 0; row < batch.batch; row++) {
    const rowStates = reasoning ? blockStates(sequences[row]!.completionIds, reasoning.vocab) : undefined;
    for (let i = window - lengths[row]!; i < window; i++) {
      targets[row * window + i] = batch.ids[row * length + length - window + i]!;
      mask[row * window + i] = 1;
      if (states) states[row * window + i] = rowStates![i - (window - lengths[row]!)]!;
    }
  }
  return tf.tidy(() => {
    const hidden = model.hiddenStates(batch, options);
    const scored = tf.reshape(tf.slice(hidden, [0, length - 1 - window, 0], [-1, window, -1]), [
      batch.batch * window,
      model.config.hiddenSize,
    ]) as tf.Tensor2D;
    const adapter = options.adapter ?? null;
    const both = tokenLogprobsAndEntropy(scored, model.headFor(adapter), targets, {
      temperature,
      topK: options.topK,
      topP: options.topP,
      chunkRows: options.chunkRows ?? defaultChunkRows(model.config.vocabSize),
      ops: model.ops,
      headTrainable: adapter?.tokenRows?.embedding.trainable ?? false,
      reasoning: reasoning && states ? { ...reasoning, states } : undefined,
    });
    const maskTensor = tf.tensor2d(mask, [batch.batch, window]);
    const [logprobs, entropies] = tf.split(both, 2, 1).map((t) => tf.mul(tf.reshape(t, [batch.batch, window]), maskTensor) as tf.Tensor2D);
    return { logprobs: logprobs!, entropies: entropies!, mask: maskTensor, lengths };
  });
}

/** Logprobs and entropies of each completion token as plain numbers, one array per sequence. */
export async function scoreCompletions(
  model: CausalLM,
  sequences: readonly PromptCompletion[],
  options: CompletionLogprobOptions = {},
): Promise<{ logprobs: number[][]; entropies: number[][] }> {
  const scores = completionLogprobs(model, sequences, options);
  try {
    const window = scores.logprobs.shape[1];
    const [logprobs, entropies] = await Promise.all([scores.logprobs.data(), scores.entropies.data()]);
    const rows = (values: tf.TypedArray) =>
      scores.lengths.map((len, row) => Array.from(values.subarray(row * window + window - len, (row + 1) * window)));
    return { logprobs: rows(logprobs), entropies: rows(entropies) };
  } finally {
    tf.dispose([scores.logprobs, scores.entropies, scores.mask]);
  }
}
