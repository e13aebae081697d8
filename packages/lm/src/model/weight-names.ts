// The tensors a Hugging Face checkpoint of a given config holds, by their HF names and
// shapes ([out, in] for linear weights, as torch stores them).
import type { ModelConfig } from "./model-config.js";

/** The seven linear modules of a decoder layer, by their HF (and PEFT target) names. */
export const LINEAR_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as const;
export type LinearModule = (typeof LINEAR_MODULES)[number];

/** The HF submodule each linear lives in: `model.layers.{i}.{group}.{module}`. */
export const MODULE_GROUP: Record<LinearModule, "self_attn" | "mlp"> = {
  q_proj: "self_attn",
  k_proj: "self_attn",
  v_proj: "self_attn",
  o_proj: "self_attn",
  gate_proj: "mlp",
  up_proj: "mlp",
  down_proj: "mlp",
};

/** [in_features, out_features] of each linear module. */
export function linearFeatures(config: ModelConfig, module: LinearModule): [number, number] {
  const { hiddenSize: h, intermediateSize: m, numHeads, numKvHeads, headDim } = config;
  switch (module) {
    case "q_proj":
      return [h, numHeads * headDim];
    case "k_proj":
    case "v_proj":
      return [h, numKvHeads * headDim];
    case "o_proj":
      return [numHeads * headDim, h];
    case "gate_proj":
    case "up_proj":
      return [h, m];
    case "down_proj":
      return [m, h];
  }
}

export function hasBias(config: ModelConfig, module: LinearModule): boolean {
  if (module === "q_proj" || module === "k_proj" || module === "v_proj") return config.qkvBias;
  if (module === "o_proj") return config.outputBias;
  return config.mlpBias;
}

export function linearName(layer: number, module: LinearModule): string {
  return `model.layers.${layer}.${MODULE_GROUP[module]}.${module}`;
}

/** Every tensor the forward pass reads, with the shape the config implies. */
export function expectedWeights(config: ModelConfig): Map<string, number[]> {
  const shapes = new Map<string, number[]>();
  shapes.set("model.embed_tokens.weight", [config.vocabSize, config.hiddenSize]);
  for (let i = 0; i < config.numLayers; i++) {
    shapes.set(`model.layers.${i}.input_layernorm.weight`, [config.hiddenSize]);
    shapes.set(`model.layers.${i}.post_attention_layernorm.weight`, [config.hiddenSize]);
    for (const module of LINEAR_MODULES) {
      const [fanIn, fanOut] = linearFeatures(config, module);
      shapes.set(`${linearName(i, module)}.weight`, [fanOut, fanIn]);
      if (hasBias(config, module)) shapes.set(`${linearName(i, module)}.bias`, [fanOut]);
    }
    if (config.qkNorm) {
      shapes.set(`model.layers.${i}.self_attn.q_norm.weight`, [config.headDim]);
      shapes.set(`model.layers.${i}.self_attn.k_norm.weight`, [config.headDim]);
    }
  }
  shapes.set("model.norm.weight", [config.hiddenSize]);
  if (!config.tieWordEmbeddings) shapes.set("lm_head.weight", [config.vocabSize, config.hiddenSize]);
  return shapes;
}

/** Tensors that may sit in a checkpoint without being used: a duplicate head of a tied model, old RoPE buffers. */
export function isIgnorableWeight(config: ModelConfig, name: string): boolean {
  if (config.tieWordEmbeddings && name === "lm_head.weight") return true;
  return /^model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq$/.test(name);
}
