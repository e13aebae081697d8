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

export class LoraAdapter {
  readonly scaling: number;
  private readonly pairs = new Map<string, LoraPair>();
  private readonly keysByVariable = new Map<string, string>();

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
  static create(modelConfig: ModelConfig, loraConfig: LoraConfig, seed: number): LoraAdapter {
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
    return adapter;
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

  /** The trainable variables, in a fixed order (layer, then module, A before B). */
  variables(): tf.Variable[] {
    return [...this.pairs.values()].flatMap((p) => [p.a, p.b]);
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
    return out;
  }

  dispose(): void {
    for (const pair of this.pairs.values()) {
      pair.a.dispose();
      pair.b.dispose();
    }
    this.pairs.clear();
    this.keysByVariable.clear();
  }
}
