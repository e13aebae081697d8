// The trainable LoRA weights of a model: for each layer and target module, A and B as tfjs
// variables. They are kept as A [in, r] and B [r, out] (PEFT's transposes) so that the
// adapter's delta is two untransposed products, x·A·B, the fast form on wasm.
// The base model never holds a reference to an adapter: a forward pass is given one, or
// none for the reference policy, so the reference costs no extra memory.
import * as tf from "@tensorflow/tfjs-core";
import { AdapterError } from "../errors.js";
import type { MatMulOps } from "../backend/matmul-ops.js";
import type { ModelConfig } from "../model/model-config.js";
import { linearFeatures, MODULE_GROUP, type LinearModule } from "../model/weight-names.js";
import { loraScaling, validateLoraConfig, type LoraConfig } from "./lora-config.js";

export type LoraMatrix = "A" | "B";

/** A tensor in PEFT's layout: A [r, in], B [out, r], float32 row-major. */
export interface PeftTensor {
  key: string;
  shape: [number, number];
  data: Float32Array;
}

/**
 * PEFT's saved names of trainable-token rows (LoraConfig trainable_token_indices): the rows'
 * values (not differences: PEFT writes them over the base rows with index_copy), [rows, hidden].
 * A tied model saves only the embedding's; PEFT ties the head's to it.
 */
export const TOKEN_ROWS_KEYS = {
  embedding: "base_model.model.model.embed_tokens.token_adapter.trainable_tokens_delta",
  head: "base_model.model.lm_head.token_adapter.trainable_tokens_delta",
} as const;

/**
 * Trained rows of the embedding (and of an untied head) for the ids [start, vocab): the
 * reasoning vocabulary's rows, trained as PEFT's trainable tokens beside LoRA.
 */
export interface TokenRows {
  /** First id of the rows (n_s); they run to the end of the vocabulary. */
  start: number;
  /** [vocab − start, hidden]. */
  embedding: tf.Variable<tf.Rank.R2>;
  /** [vocab − start, hidden] for an untied head; null when the head is the embedding. */
  head: tf.Variable<tf.Rank.R2> | null;
}

/** Initial rows for a new adapter's token rows (copied into variables). */
export interface TokenRowsInit {
  start: number;
  embedding: tf.Tensor2D;
  head: tf.Tensor2D | null;
}

/** PEFT's saved name of a LoRA matrix (no ".default" adapter name in saved files). */
export function peftKey(layer: number, module: LinearModule, matrix: LoraMatrix): string {
  return `base_model.model.model.layers.${layer}.${MODULE_GROUP[module]}.${module}.lora_${matrix}.weight`;
}

interface LoraPair {
  layer: number;
  module: LinearModule;
  /** [in, r] */
  a: tf.Variable<tf.Rank.R2>;
  /** [r, out] */
  b: tf.Variable<tf.Rank.R2>;
}

let adapterCount = 0;

/** The token rows a PEFT file holds for trainable_token_indices [start, start + count). */
function tokenRowsFromPeft(
  modelConfig: ModelConfig,
  rows: { start: number; count: number },
  tensors: ReadonlyMap<string, PeftTensor>,
): TokenRowsInit {
  if (rows.start + rows.count !== modelConfig.vocabSize) {
    throw new AdapterError(
      `adapter_config.json "trainable_token_indices" covers ids ${rows.start}..${rows.start + rows.count - 1}; this model's reasoning rows are ${rows.start}..${modelConfig.vocabSize - 1} (is the model expanded with the adapter's reasoning_token_map.json?)`,
    );
  }
  const take = (key: string) => {
    const t = tensors.get(key);
    if (!t)
      throw new AdapterError(`adapter lacks "${key}" (shape [${rows.count}, ${modelConfig.hiddenSize}]) for its trainable_token_indices`);
    if (t.shape[0] !== rows.count || t.shape[1] !== modelConfig.hiddenSize) {
      throw new AdapterError(`adapter tensor "${key}" has shape [${t.shape.join(", ")}]; need [${rows.count}, ${modelConfig.hiddenSize}]`);
    }
    return tf.tensor2d(t.data, t.shape);
  };
  return {
    start: rows.start,
    embedding: take(TOKEN_ROWS_KEYS.embedding),
    head: modelConfig.tieWordEmbeddings ? null : take(TOKEN_ROWS_KEYS.head),
  };
}

export class LoraAdapter {
  readonly scaling: number;
  private readonly pairs = new Map<string, LoraPair>();
  private readonly keysByVariable = new Map<string, string>();
  /** Trained reasoning rows; null when the adapter carries none (the rows stay the base's). */
  tokenRows: TokenRows | null = null;
  /** Full embedding / head with the token rows in place, kept for decoding (see `tables`). */
  private cachedTables: {
    base: tf.Tensor2D;
    rowsData: object;
    headData: object | undefined;
    embedding: tf.Tensor2D;
    head: tf.Tensor2D;
  } | null = null;

  private constructor(
    readonly modelConfig: ModelConfig,
    readonly config: LoraConfig,
    /** Prefix that keeps variable names unique in the tfjs engine. */
    private readonly namePrefix: string,
  ) {
    this.scaling = loraScaling(config);
  }

  /**
   * A fresh adapter as PEFT initialises one: A Kaiming-uniform (bound 1/√in, from
   * kaiming_uniform_(a=√5)), B zero, so the adapted model starts equal to the base.
   */
  static create(modelConfig: ModelConfig, loraConfig: LoraConfig, seed: number, tokenRows?: TokenRowsInit): LoraAdapter {
    const config = validateLoraConfig(loraConfig);
    const adapter = new LoraAdapter(modelConfig, config, `lora${adapterCount++}`);
    let index = 0;
    adapter.build((_layer, _module, fanIn, fanOut) => {
      const bound = 1 / Math.sqrt(fanIn);
      return {
        a: tf.randomUniform([fanIn, config.rank], -bound, bound, "float32", seed + index++),
        b: tf.zeros([config.rank, fanOut]),
      };
    });
    if (tokenRows) adapter.setTokenRows(tokenRows);
    return adapter;
  }

  /** Gives the adapter trainable token rows for ids [start, vocab), starting from the given values. */
  setTokenRows(init: TokenRowsInit): void {
    const rows = this.modelConfig.vocabSize - init.start;
    const check = (t: tf.Tensor2D, what: string) => {
      if (t.shape[0] !== rows || t.shape[1] !== this.modelConfig.hiddenSize) {
        throw new AdapterError(
          `token rows (${what}) have shape [${t.shape.join(", ")}]; ids ${init.start}..${this.modelConfig.vocabSize - 1} need [${rows}, ${this.modelConfig.hiddenSize}]`,
        );
      }
    };
    if (!(init.start > 0 && rows > 0))
      throw new AdapterError(`token rows must start inside the vocabulary (start ${init.start}, vocab ${this.modelConfig.vocabSize})`);
    check(init.embedding, "embedding");
    if (this.modelConfig.tieWordEmbeddings !== (init.head === null)) {
      throw new AdapterError(
        `token rows: a ${this.modelConfig.tieWordEmbeddings ? "tied model has no separate head rows" : "model with an untied head needs head rows"}`,
      );
    }
    if (init.head) check(init.head, "head");
    this.disposeTokenRows();
    const embedding = tf.variable(init.embedding, true, `${this.namePrefix}.token_rows.embed_tokens`);
    const head = init.head ? tf.variable(init.head, true, `${this.namePrefix}.token_rows.lm_head`) : null;
    this.tokenRows = { start: init.start, embedding, head };
    this.keysByVariable.set(embedding.name, TOKEN_ROWS_KEYS.embedding);
    if (head) this.keysByVariable.set(head.name, TOKEN_ROWS_KEYS.head);
  }

  /**
   * The embedding and head with the token rows in place of the base's. Under a gradient tape
   * they are built for the pass (differentiable in the rows); otherwise they are built once
   * and kept until the rows change (an optimizer's assign gives a variable new data) or the
   * adapter is disposed, so decoding does not rebuild a [vocab, hidden] matrix per token.
   */
  tables(baseEmbedding: tf.Tensor2D, baseHead: tf.Tensor2D): { embedding: tf.Tensor2D; head: tf.Tensor2D } {
    const rows = this.tokenRows;
    if (!rows) return { embedding: baseEmbedding, head: baseHead };
    const merge = (base: tf.Tensor2D, trained: tf.Tensor2D) =>
      tf.concat([tf.slice(base, [0, 0], [rows.start, base.shape[1]]), trained], 0) as tf.Tensor2D;
    if (tf.engine().state.gradientDepth > 0) {
      const embedding = merge(baseEmbedding, rows.embedding);
      return { embedding, head: rows.head ? merge(baseHead, rows.head) : embedding };
    }
    const cached = this.cachedTables;
    if (cached && cached.base === baseEmbedding && cached.rowsData === rows.embedding.dataId && cached.headData === rows.head?.dataId)
      return cached;
    this.disposeCachedTables();
    const embedding = tf.keep(tf.tidy(() => merge(baseEmbedding, rows.embedding)));
    const head = rows.head ? tf.keep(tf.tidy(() => merge(baseHead, rows.head!))) : embedding;
    this.cachedTables = { base: baseEmbedding, rowsData: rows.embedding.dataId, headData: rows.head?.dataId, embedding, head };
    return this.cachedTables;
  }

  private disposeCachedTables(): void {
    if (!this.cachedTables) return;
    const { embedding, head } = this.cachedTables;
    embedding.dispose();
    if (head !== embedding) head.dispose();
    this.cachedTables = null;
  }

  private disposeTokenRows(): void {
    this.disposeCachedTables();
    if (!this.tokenRows) return;
    this.keysByVariable.delete(this.tokenRows.embedding.name);
    this.tokenRows.embedding.dispose();
    if (this.tokenRows.head) {
      this.keysByVariable.delete(this.tokenRows.head.name);
      this.tokenRows.head.dispose();
    }
    this.tokenRows = null;
  }

  /** An adapter holding given PEFT tensors (A [r, in], B [out, r]); every target's pair must be there. */
  static fromPeftTensors(modelConfig: ModelConfig, loraConfig: LoraConfig, tensors: ReadonlyMap<string, PeftTensor>): LoraAdapter {
    const config = validateLoraConfig(loraConfig);
    const adapter = new LoraAdapter(modelConfig, config, `lora${adapterCount++}`);
    const checked = (key: string, shape: [number, number]): PeftTensor => {
      const tensor = tensors.get(key);
      if (!tensor) throw new AdapterError(`adapter lacks "${key}" (shape [${shape.join(", ")}])`);
      if (tensor.shape[0] !== shape[0] || tensor.shape[1] !== shape[1]) {
        throw new AdapterError(
          `adapter tensor "${key}" has shape [${tensor.shape.join(", ")}]; the model and r=${config.rank} need [${shape.join(", ")}]`,
        );
      }
      return tensor;
    };
    const internal = (tensor: PeftTensor) => tf.tidy(() => tf.transpose(tf.tensor2d(tensor.data, tensor.shape)));
    try {
      adapter.build((layer, module, fanIn, fanOut) => {
        // Both are checked before either becomes a tensor, so a bad pair leaves nothing behind.
        const a = checked(peftKey(layer, module, "A"), [config.rank, fanIn]);
        const b = checked(peftKey(layer, module, "B"), [fanOut, config.rank]);
        return { a: internal(a), b: internal(b) };
      });
      if (config.tokenRows) {
        const init = tokenRowsFromPeft(modelConfig, config.tokenRows, tensors);
        try {
          adapter.setTokenRows(init);
        } finally {
          init.embedding.dispose();
          init.head?.dispose();
        }
      }
    } catch (error) {
      adapter.dispose();
      throw error;
    }
    return adapter;
  }

  private build(init: (layer: number, module: LinearModule, fanIn: number, fanOut: number) => { a: tf.Tensor2D; b: tf.Tensor2D }) {
    for (let layer = 0; layer < this.modelConfig.numLayers; layer++) {
      for (const module of this.config.targetModules) {
        const [fanIn, fanOut] = linearFeatures(this.modelConfig, module);
        const { a, b } = init(layer, module, fanIn, fanOut);
        const name = `${this.namePrefix}.layers.${layer}.${module}`;
        const pair: LoraPair = {
          layer,
          module,
          a: tf.variable(a, true, `${name}.lora_A`),
          b: tf.variable(b, true, `${name}.lora_B`),
        };
        a.dispose();
        b.dispose();
        this.pairs.set(`${layer}.${module}`, pair);
        this.keysByVariable.set(pair.a.name, peftKey(layer, module, "A"));
        this.keysByVariable.set(pair.b.name, peftKey(layer, module, "B"));
      }
    }
  }

  /**
   * The adapter's contribution to a target's output: dropout(x)·A·B·scaling, or null for a
   * module without an adapter. Dropout applies only when a seed is given (training).
   */
  delta(layer: number, module: LinearModule, x: tf.Tensor2D, ops: MatMulOps, dropoutSeed?: string): tf.Tensor2D | null {
    const pair = this.pairs.get(`${layer}.${module}`);
    if (!pair) return null;
    return tf.tidy(() => {
      const input =
        dropoutSeed !== undefined && this.config.dropout > 0
          ? (tf.dropout(x, this.config.dropout, undefined, dropoutSeed) as tf.Tensor2D)
          : x;
      // Scaling the [N, r] intermediate is the cheapest place for it.
      const down = tf.mul(ops.matMul(input, pair.a), this.scaling) as tf.Tensor2D;
      return ops.matMul(down, pair.b);
    });
  }

  /** The trainable variables, in a fixed order (layer, then module, A before B; then the token rows). */
  variables(): tf.Variable[] {
    const rows = this.tokenRows ? [this.tokenRows.embedding, ...(this.tokenRows.head ? [this.tokenRows.head] : [])] : [];
    return [...[...this.pairs.values()].flatMap((p) => [p.a, p.b]), ...rows];
  }

  /** PEFT key of each variable name, for gradients returned by variableGrads. */
  peftKeyOfVariable(variableName: string): string | undefined {
    return this.keysByVariable.get(variableName);
  }

  /** Current weights in PEFT's layout (A [r, in], B [out, r]), read back from the backend. */
  peftTensors(): PeftTensor[] {
    const out: PeftTensor[] = [];
    for (const pair of this.pairs.values()) {
      for (const [matrix, variable] of [
        ["A", pair.a],
        ["B", pair.b],
      ] as const) {
        const transposed = tf.transpose(variable);
        out.push({
          key: peftKey(pair.layer, pair.module, matrix),
          shape: transposed.shape as [number, number],
          data: transposed.dataSync() as Float32Array,
        });
        transposed.dispose();
      }
    }
    if (this.tokenRows) {
      const rows = this.tokenRows;
      for (const [key, variable] of [
        [TOKEN_ROWS_KEYS.embedding, rows.embedding],
        [TOKEN_ROWS_KEYS.head, rows.head],
      ] as const) {
        if (variable)
          out.push({ key, shape: variable.shape as [number, number], data: Float32Array.from(variable.dataSync() as Float32Array) });
      }
    }
    return out;
  }

  dispose(): void {
    this.disposeTokenRows();
    for (const pair of this.pairs.values()) {
      pair.a.dispose();
      pair.b.dispose();
    }
    this.pairs.clear();
    this.keysByVariable.clear();
  }
}
