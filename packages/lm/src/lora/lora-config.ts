// LoRA settings, named as PEFT names them: W' = W + scaling·B·A with
// scaling = alpha/r, or alpha/√r with rsLoRA.
import { AdapterError } from "../errors.js";
import { LINEAR_MODULES, type LinearModule } from "../model/weight-names.js";

export interface LoraConfig {
  /** r: the rank of A [r, in] and B [out, r]. */
  rank: number;
  /** lora_alpha. */
  alpha: number;
  /** Linear modules that get an adapter (PEFT target_modules). */
  targetModules: LinearModule[];
  /** lora_dropout: dropout on the adapter's input while training. */
  dropout: number;
  /** use_rslora: scale by alpha/√r instead of alpha/r. */
  useRslora: boolean;
  /**
   * PEFT trainable_token_indices, read from a file: the rows [start, start + count) that the
   * adapter carries (the reasoning vocabulary's, which run to the end of the vocabulary).
   */
  tokenRows?: { start: number; count: number };
}

export function loraScaling(config: LoraConfig): number {
  return config.useRslora ? config.alpha / Math.sqrt(config.rank) : config.alpha / config.rank;
}

/** Checks a LoRA config, naming the first bad field and what it accepts. */
export function validateLoraConfig(config: LoraConfig): LoraConfig {
  if (!Number.isSafeInteger(config.rank) || config.rank <= 0) {
    throw new AdapterError(`LoRA rank ${config.rank} must be a positive integer`);
  }
  if (typeof config.alpha !== "number" || !(config.alpha > 0) || !Number.isFinite(config.alpha)) {
    throw new AdapterError(`LoRA alpha ${config.alpha} must be a positive number`);
  }
  if (typeof config.dropout !== "number" || !(config.dropout >= 0 && config.dropout < 1)) {
    throw new AdapterError(`LoRA dropout ${config.dropout} must be in [0, 1)`);
  }
  if (!Array.isArray(config.targetModules) || config.targetModules.length === 0) {
    throw new AdapterError(`LoRA target modules must be a non-empty list of: ${LINEAR_MODULES.join(", ")}`);
  }
  for (const module of config.targetModules) {
    if (!(LINEAR_MODULES as readonly string[]).includes(module)) {
      throw new AdapterError(`LoRA target module ${JSON.stringify(module)} is not known; accepted: ${LINEAR_MODULES.join(", ")}`);
    }
  }
  if (new Set(config.targetModules).size !== config.targetModules.length) {
    throw new AdapterError(`LoRA target modules [${config.targetModules.join(", ")}] list a module twice`);
  }
  if (typeof config.useRslora !== "boolean") throw new AdapterError(`LoRA useRslora must be true or false`);
  // Keep the model's order so exports list modules the same way whatever the input order.
  return { ...config, targetModules: LINEAR_MODULES.filter((m) => config.targetModules.includes(m)) };
}
