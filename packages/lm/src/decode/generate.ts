// Batched decoding for the embedded inference backend: a prompt pass over the left-padded
// prompts, then one token per row per pass with the KV cache (or, for checking, by full
// recomputation of every sequence at every step).
import * as tf from "@tensorflow/tfjs-core";
import { ModelInputError } from "../errors.js";
import type { LoraAdapter } from "../lora/lora-adapter.js";
import type { CausalLM } from "../model/causal-lm.js";
import { leftPaddedBatch } from "../model/token-batch.js";
import { KvCache } from "./kv-cache.js";
import { ReasoningBlockTracker } from "../reasoning-vocab/reasoning-mask.js";
import { isStop, sampleToken, validateSamplingParams, type SamplingParams } from "./sampler.js";
import { rowSeed, SeededRandom } from "@lean-grpo/random";

export interface GenerationOptions extends Partial<SamplingParams> {
  /** Tokens to generate per sequence at most. */
  maxNewTokens: number;
  /** Seed of the sampling; the same seed gives the same tokens. Random when absent. */
  seed?: number;
  /** Token ids that end a sequence (kept as its last token); default: the model's eos ids. */
  stopTokenIds?: readonly number[];
  /** The policy's adapter; null or absent samples from the base model. */
  adapter?: LoraAdapter | null;
  /** False recomputes every sequence in full at every step (slow; for checking the cache). */
  useKvCache?: boolean;
  signal?: AbortSignal;
}

export interface GeneratedSequence {
  tokenIds: number[];
  /** Log-probability of each generated token at the sampling temperature (1 when greedy). */
  logprobs: number[];
  /** "stop": a stop token ended it; "length": maxNewTokens did. */
  finishReason: "stop" | "length";
}

/** Last-column logits [batch, vocab] of a pass's hidden states. */
async function lastLogits(model: CausalLM, hidden: tf.Tensor3D, adapter: LoraAdapter | null): Promise<Float32Array> {
  const [batch, length, size] = hidden.shape;
  const logits = tf.tidy(() => model.logits(tf.reshape(tf.slice(hidden, [0, length - 1, 0], [batch, 1, size]), [batch, size]), adapter));
  try {
    return (await logits.data()) as Float32Array;
  } finally {
    logits.dispose();
  }
}

export async function generate(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  options: GenerationOptions,
): Promise<GeneratedSequence[]> {
  const sampling: SamplingParams = {
    temperature: options.temperature ?? 1,
    topK: options.topK ?? 0,
    topP: options.topP ?? 1,
    ...(options.reasoning ? { reasoning: options.reasoning } : {}),
  };
  validateSamplingParams(sampling);
  const { maxNewTokens } = options;
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1) throw new ModelInputError(`max_tokens ${maxNewTokens} must be an integer >= 1`);
  const stopTokens = new Set(options.stopTokenIds ?? model.config.eosTokenIds);
  const batch = leftPaddedBatch(prompts, model.config);
  const longest = Math.max(...batch.lengths) + maxNewTokens;
  if (longest > model.config.maxPositionEmbeddings) {
    throw new ModelInputError(
      `prompt plus max_tokens is ${longest} tokens; the model's context (max_position_embeddings) is ${model.config.maxPositionEmbeddings}`,
    );
  }
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const randoms = prompts.map((_, row) => new SeededRandom(rowSeed(seed, row)));
  const forwardOptions = { adapter: options.adapter ?? null, signal: options.signal };
  const vocab = model.config.vocabSize;
  const results: GeneratedSequence[] = prompts.map(() => ({ tokenIds: [], logprobs: [], finishReason: "length" }));
  const finished = prompts.map(() => false);
  const blocks = prompts.map(() => (sampling.reasoning ? new ReasoningBlockTracker(sampling.reasoning.vocab) : null));

  const cache = options.useKvCache === false ? null : new KvCache(batch);
  try {
    let logits: Float32Array;
    if (cache) {
      const { hidden, present } = model.forward(
        { batch: batch.batch, queryLength: batch.length, ids: batch.ids, positions: batch.positions, keyMask: batch.keyMask },
        forwardOptions,
      );
      cache.update(present);
      logits = await lastLogits(model, hidden, forwardOptions.adapter).finally(() => hidden.dispose());
    } else {
      logits = await recomputedLogits(model, prompts, results, forwardOptions);
    }
    for (let step = 0; step < maxNewTokens; step++) {
      const next = new Int32Array(batch.batch);
      results.forEach((result, row) => {
        if (finished[row]) return;
        const { token, logprob } = sampleToken(
          logits.subarray(row * vocab, (row + 1) * vocab),
          sampling,
          () => randoms[row]!.next(),
          blocks[row]?.state,
        );
        blocks[row]?.push(token);
        result.tokenIds.push(token);
        result.logprobs.push(logprob);
        next[row] = token;
        if (isStop(stopTokens, token, sampling)) {
          finished[row] = true;
          result.finishReason = "stop";
        }
      });
      if (step === maxNewTokens - 1 || finished.every(Boolean)) break;
      // Decoding is synchronous tensor work between microtasks: without a macrotask turn per
      // token, the process's sockets wait for the whole generation (an async run's TrainStep
      // stream to a learner on another thread would not even be sent).
      await new Promise<void>((resolve) => setImmediate(resolve));
      options.signal?.throwIfAborted();
      if (cache) {
        // Finished rows still take a column (their outputs are ignored) so the batch stays rectangular.
        const positions = cache.appendColumn();
        const { hidden, present } = model.forward(
          { batch: batch.batch, queryLength: 1, ids: next, positions, keyMask: cache.keyMask },
          forwardOptions,
          cache.past,
        );
        cache.update(present);
        logits = await lastLogits(model, hidden, forwardOptions.adapter).finally(() => hidden.dispose());
      } else {
        logits = await recomputedLogits(model, prompts, results, forwardOptions);
      }
    }
  } finally {
    cache?.dispose();
  }
  return results;
}

/** Next-token logits of every row by running prompt + generated tokens from scratch. */
async function recomputedLogits(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  results: GeneratedSequence[],
  forwardOptions: { adapter: LoraAdapter | null; signal: AbortSignal | undefined },
): Promise<Float32Array> {
  const batch = leftPaddedBatch(
    prompts.map((p, row) => [...p, ...results[row]!.tokenIds]),
    model.config,
  );
  const hidden = model.hiddenStates(batch, forwardOptions);
  return lastLogits(model, hidden, forwardOptions.adapter).finally(() => hidden.dispose());
}
