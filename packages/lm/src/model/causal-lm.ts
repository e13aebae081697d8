// A Qwen2 / Qwen3 / Llama causal language model on tfjs: embedding, decoder layers, final
// norm and head, with an optional LoRA adapter per call and an optional KV cache.
import * as tf from "@tensorflow/tfjs-core";
// Differentiating through the model needs kernel gradients, which tfjs-core's Node build lacks.
import "../backend/register-gradients.js";
import { matMulOpsForBackend, type MatMulOps } from "../backend/matmul-ops.js";
import { AdapterError, ModelInputError } from "../errors.js";
import type { LoraAdapter } from "../lora/lora-adapter.js";
import { attentionBias } from "./attention-mask.js";
import type { KeyValue } from "./attention.js";
import { loadCheckpoint, type Checkpoint } from "./checkpoint.js";
import { decoderLayer } from "./decoder-layer.js";
import type { ForwardContext } from "./forward-context.js";
import type { ModelConfig } from "./model-config.js";
import { embeddingLookup } from "./embedding-lookup.js";
import { createModelWeights, disposeModelWeights, isTrainable, type ModelWeightOptions, type ModelWeights } from "./model-weights.js";
import { rmsNorm } from "./rms-norm.js";
import { inverseFrequencies, rotaryTables, rotateHalfMatrix } from "./rotary-embedding.js";
import type { TokenBatch } from "./token-batch.js";
import type { ReasoningVocabulary } from "../reasoning-vocab/reasoning-vocabulary.js";

export interface ForwardOptions {
  /** The policy's LoRA adapter; null or absent runs the reference (base) model. */
  adapter?: LoraAdapter | null;
  /** Seed for LoRA dropout masks while training; absent means no dropout. */
  dropoutSeed?: number;
  /** Checked between layers: an aborted signal stops the pass with its reason. */
  signal?: AbortSignal;
}

/** New tokens for one pass, with the padding mask of every key they attend to. */
export interface ForwardInput {
  batch: number;
  /** New tokens per row. */
  queryLength: number;
  /** [batch, queryLength] token ids. */
  ids: Int32Array;
  /** [batch, queryLength] RoPE positions. */
  positions: Int32Array;
  /** [batch, keyLength] (cached keys, then the new ones): 1 = token, 0 = padding. */
  keyMask: Uint8Array;
}

export interface ForwardOutput {
  /** Final-normed hidden states [batch, queryLength, hidden]. */
  hidden: tf.Tensor3D;
  /** Keys and values of every layer, past and new: the cache for the next pass. */
  present: KeyValue[];
}

export class CausalLM {
  /** The backend the model was built on; its products are chosen for it. */
  readonly backendName: string;
  /**
   * The reasoning vocabulary the model was expanded with (model/reasoning-model.ts); null for
   * a model without one. Logprob and sampling options that name a mask mode read it here.
   */
  reasoning: ReasoningVocabulary | null = null;
  readonly ops: MatMulOps;
  private readonly inverseFrequency: Float32Array;
  private readonly rotation: tf.Tensor2D;

  private constructor(
    readonly config: ModelConfig,
    readonly weights: ModelWeights,
  ) {
    this.backendName = tf.getBackend();
    this.ops = matMulOpsForBackend(this.backendName);
    this.inverseFrequency = inverseFrequencies(config);
    this.rotation = rotateHalfMatrix(config.headDim);
  }

  /** Loads a Hugging Face model directory onto the active backend (frozen unless `trainable`). */
  static async load(directory: string, options: ModelWeightOptions = {}): Promise<CausalLM> {
    return CausalLM.fromCheckpoint(await loadCheckpoint(directory), options);
  }

  static fromCheckpoint(checkpoint: Checkpoint, options: ModelWeightOptions = {}): CausalLM {
    return new CausalLM(checkpoint.config, createModelWeights(checkpoint, options));
  }

  /** One pass over new tokens, attending to `past` (the previous pass's `present`) when given. */
  forward(input: ForwardInput, options: ForwardOptions = {}, past: KeyValue[] | null = null): ForwardOutput {
    this.checkUsable(options.adapter ?? null);
    const { batch, queryLength } = input;
    const keyLength = input.keyMask.length / batch;
    this.checkInput(input, keyLength, past);
    // tidy returns tensors, not objects of our own types: flatten, then rebuild.
    const [hidden, ...cache] = tf.tidy(() => {
      const { cos, sin } = rotaryTables(this.inverseFrequency, input.positions, batch, queryLength);
      const ctx: ForwardContext = {
        config: this.config,
        ops: this.ops,
        adapter: options.adapter ?? null,
        dropoutSeed: options.dropoutSeed,
        batch,
        queryLength,
        cos,
        sin,
        rotation: this.rotation,
        bias: attentionBias(input.keyMask, batch, queryLength, keyLength),
      };
      const adapter = options.adapter ?? null;
      const table = adapter?.tokenRows ? adapter.tables(this.weights.embedding, this.weights.head).embedding : this.weights.embedding;
      let x = embeddingLookup(table, input.ids, isTrainable(this.weights.embedding) || (adapter?.tokenRows?.embedding.trainable ?? false));
      const present: tf.Tensor4D[] = [];
      this.weights.layers.forEach((layerWeights, layer) => {
        options.signal?.throwIfAborted();
        const out = decoderLayer(x, layer, layerWeights, ctx, past?.[layer] ?? null);
        x = out.hidden;
        present.push(out.present.keys, out.present.values);
      });
      const normed = rmsNorm(x, this.weights.finalNorm, this.config.rmsNormEps);
      return [tf.reshape(normed, [batch, queryLength, this.config.hiddenSize]), ...present];
    });
    const present: KeyValue[] = [];
    for (let i = 0; i < cache.length; i += 2) {
      present.push({ keys: cache[i] as tf.Tensor4D, values: cache[i + 1] as tf.Tensor4D });
    }
    return { hidden: hidden as tf.Tensor3D, present };
  }

  /** Final hidden states of a whole left-padded batch (no cache kept). */
  hiddenStates(batch: TokenBatch, options: ForwardOptions = {}): tf.Tensor3D {
    const { hidden, present } = this.forward(
      { batch: batch.batch, queryLength: batch.length, ids: batch.ids, positions: batch.positions, keyMask: batch.keyMask },
      options,
    );
    for (const { keys, values } of present) tf.dispose([keys, values]);
    return hidden;
  }

  /** Full-vocabulary logits [rows, vocab] of hidden states [rows, hidden] (decoding; scoring uses token-logprobs). */
  logits(hidden: tf.Tensor2D, adapter: LoraAdapter | null = null): tf.Tensor2D {
    return this.ops.product(hidden, this.headFor(adapter), false, true);
  }

  /**
   * The output head under an adapter: the base head, with the adapter's token rows in place
   * when it has them.
   */
  headFor(adapter: LoraAdapter | null): tf.Tensor2D {
    if (!adapter?.tokenRows) return this.weights.head;
    return adapter.tables(this.weights.embedding, this.weights.head).head;
  }

  dispose(): void {
    disposeModelWeights(this.weights);
    this.rotation.dispose();
  }

  private checkInput(input: ForwardInput, keyLength: number, past: KeyValue[] | null): void {
    const { batch, queryLength, ids, positions } = input;
    const pastLength = past?.[0]?.keys.shape[2] ?? 0;
    if (ids.length !== batch * queryLength || positions.length !== ids.length || keyLength !== pastLength + queryLength) {
      throw new ModelInputError(
        `forward input shapes disagree: ${ids.length} ids and ${positions.length} positions for batch ${batch} × ${queryLength}, ` +
          `key mask ${input.keyMask.length} for ${pastLength} cached + ${queryLength} new keys per row`,
      );
    }
    if (past && past.length !== this.config.numLayers)
      throw new ModelInputError(`cache has ${past.length} layers; the model has ${this.config.numLayers}`);
    for (const id of ids) {
      if (id < 0 || id >= this.config.vocabSize)
        throw new ModelInputError(`token id ${id} is not in the vocabulary [0, ${this.config.vocabSize})`);
    }
  }

  private checkUsable(adapter: LoraAdapter | null): void {
    if (tf.getBackend() !== this.backendName) {
      throw new Error(`model was built on the ${this.backendName} backend but ${tf.getBackend()} is active; load it again after switching`);
    }
    if (!adapter) return;
    const a = adapter.modelConfig;
    const m = this.config;
    if (
      a.numLayers !== m.numLayers ||
      a.hiddenSize !== m.hiddenSize ||
      a.intermediateSize !== m.intermediateSize ||
      a.numHeads !== m.numHeads ||
      a.numKvHeads !== m.numKvHeads ||
      a.headDim !== m.headDim
    ) {
      throw new AdapterError("adapter was built for a model of another shape (layers, hidden, heads or head_dim differ)");
    }
    if (adapter.tokenRows && a.vocabSize !== m.vocabSize) {
      throw new AdapterError(`adapter's token rows are for a vocabulary of ${a.vocabSize} ids; the model has ${m.vocabSize}`);
    }
  }
}
