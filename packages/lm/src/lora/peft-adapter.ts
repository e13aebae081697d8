// LoRA adapters in PEFT's on-disk format, which vLLM (--enable-lora, /v1/load_lora_adapter)
// and PEFT (PeftModel.from_pretrained) load: adapter_config.json plus
// adapter_model.safetensors with keys
//   base_model.model.model.layers.{i}.{self_attn|mlp}.{module}.lora_{A|B}.weight
// shaped A [r, in] and B [out, r], plus, for a reasoning vocabulary, PEFT's trainable tokens
// (`trainable_token_indices` and the `token_adapter.trainable_tokens_delta` rows; vLLM does not
// load those). Import accepts only what the forward pass implements;
// settings it would silently ignore (DoRA, biases, per-layer ranks, modules_to_save) are
// refused, naming the key.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { AdapterError } from "../errors.js";
import type { ModelConfig } from "../model/model-config.js";
import { LINEAR_MODULES, type LinearModule } from "../model/weight-names.js";
import { SafetensorsFile } from "../safetensors/safetensors-reader.js";
import { serializeSafetensors } from "../safetensors/safetensors-writer.js";
import type { LoraConfig } from "./lora-config.js";
import { LoraAdapter, type PeftTensor } from "./lora-adapter.js";

export const ADAPTER_CONFIG_FILE = "adapter_config.json";
export const ADAPTER_WEIGHTS_FILE = "adapter_model.safetensors";

export interface PeftExportOptions {
  /** base_model_name_or_path: the model the adapter belongs to (vLLM shows it as the parent). */
  baseModel: string;
  /** Tensor dtype in the file; vLLM casts to its lora dtype either way. Default F32. */
  dtype?: "F32" | "BF16";
}

/** The two files of a PEFT adapter, as bytes. */
export interface PeftFiles {
  [ADAPTER_CONFIG_FILE]: Uint8Array;
  [ADAPTER_WEIGHTS_FILE]: Uint8Array;
}

/** PEFT trainable_token_indices for rows [start, start + count): the embedding's, and an untied head's. */
export function trainableTokenIndices(rows: { start: number; count: number }, untiedHead: boolean): Record<string, number[]> {
  const ids = Array.from({ length: rows.count }, (_, i) => rows.start + i);
  return untiedHead ? { embed_tokens: ids, lm_head: ids } : { embed_tokens: ids };
}

/** The adapter_config.json PEFT writes for a LoRA of a causal LM (with trainable token rows when `tokenRows`). */
export function peftAdapterConfig(
  config: LoraConfig,
  baseModel: string,
  tokenRows?: { start: number; count: number; untiedHead: boolean },
): Record<string, unknown> {
  const tokens = tokenRows ? { trainable_token_indices: trainableTokenIndices(tokenRows, tokenRows.untiedHead) } : {};
  return {
    ...tokens,
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    base_model_name_or_path: baseModel,
    r: config.rank,
    lora_alpha: config.alpha,
    lora_dropout: config.dropout,
    target_modules: config.targetModules,
    use_rslora: config.useRslora,
    use_dora: false,
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
    modules_to_save: null,
    layers_to_transform: null,
    rank_pattern: {},
    alpha_pattern: {},
  };
}

function adapterTokenRows(adapter: LoraAdapter): { start: number; count: number; untiedHead: boolean } | undefined {
  const rows = adapter.tokenRows;
  return rows ? { start: rows.start, count: rows.embedding.shape[0], untiedHead: rows.head !== null } : undefined;
}

export function exportPeftAdapter(adapter: LoraAdapter, options: PeftExportOptions): PeftFiles {
  const tensors = adapter.peftTensors().map((t) => ({ name: t.key, shape: t.shape, data: t.data, dtype: options.dtype ?? "F32" }));
  return {
    [ADAPTER_CONFIG_FILE]: new TextEncoder().encode(
      JSON.stringify(peftAdapterConfig(adapter.config, options.baseModel, adapterTokenRows(adapter)), null, 2),
    ),
    [ADAPTER_WEIGHTS_FILE]: serializeSafetensors(tensors, { format: "pt" }),
  };
}

export async function savePeftAdapter(adapter: LoraAdapter, directory: string, options: PeftExportOptions): Promise<void> {
  const files = exportPeftAdapter(adapter, options);
  await mkdir(directory, { recursive: true });
  await writeFile(path.join(directory, ADAPTER_CONFIG_FILE), files[ADAPTER_CONFIG_FILE]);
  await writeFile(path.join(directory, ADAPTER_WEIGHTS_FILE), files[ADAPTER_WEIGHTS_FILE]);
}

function refuse(key: string, message: string): never {
  throw new AdapterError(`${ADAPTER_CONFIG_FILE} "${key}" ${message}`);
}

function isEmpty(value: unknown): boolean {
  return (
    value == null ||
    (Array.isArray(value) && value.length === 0) ||
    (typeof value === "object" && Object.keys(value as object).length === 0)
  );
}

/** Reads adapter_config.json into a LoraConfig, refusing what the learner does not implement. */
export function parsePeftAdapterConfig(raw: unknown): LoraConfig {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new AdapterError(`${ADAPTER_CONFIG_FILE} must be a JSON object`);
  const c = raw as Record<string, unknown>;
  if (c.peft_type !== undefined && c.peft_type !== "LORA") refuse("peft_type", `is ${JSON.stringify(c.peft_type)}; accepted: "LORA"`);
  if (c.use_dora === true) refuse("use_dora", "is true; DoRA adapters are not supported");
  if ((c.bias ?? "none") !== "none") refuse("bias", `is ${JSON.stringify(c.bias)}; accepted: "none"`);
  if (c.fan_in_fan_out === true) refuse("fan_in_fan_out", "is true; accepted: false (Conv1D layers are not in these models)");
  for (const key of ["modules_to_save", "layers_to_transform", "rank_pattern", "alpha_pattern"]) {
    if (!isEmpty(c[key])) refuse(key, `is ${JSON.stringify(c[key])}; only empty/null is supported`);
  }
  const rank = c.r;
  if (!Number.isSafeInteger(rank) || (rank as number) <= 0) refuse("r", `is ${JSON.stringify(rank)}; it must be a positive integer`);
  const alpha = c.lora_alpha;
  if (typeof alpha !== "number" || !(alpha > 0)) refuse("lora_alpha", `is ${JSON.stringify(alpha)}; it must be a positive number`);
  const dropout = c.lora_dropout ?? 0;
  if (typeof dropout !== "number" || !(dropout >= 0 && dropout < 1))
    refuse("lora_dropout", `is ${JSON.stringify(dropout)}; it must be in [0, 1)`);
  const useRslora = c.use_rslora ?? false;
  if (typeof useRslora !== "boolean") refuse("use_rslora", `is ${JSON.stringify(useRslora)}; it must be true or false`);
  const tokenRows = parseTokenIndices(c.trainable_token_indices);
  return {
    rank: rank as number,
    alpha,
    dropout,
    useRslora,
    targetModules: parseTargets(c.target_modules),
    ...(tokenRows ? { tokenRows } : {}),
  };
}

/**
 * trainable_token_indices: a list (the input embedding's) or {embed_tokens: [...], lm_head: [...]}.
 * Accepted: one contiguous range, the same for both (the reasoning ids); PEFT's other uses
 * (a few scattered ids) are refused, naming the key.
 */
function parseTokenIndices(value: unknown): { start: number; count: number } | undefined {
  if (isEmpty(value)) return undefined;
  const lists: unknown[] = Array.isArray(value)
    ? [value]
    : typeof value === "object"
      ? Object.entries(value as object).map(([k, v]) => {
          if (k !== "embed_tokens" && k !== "lm_head")
            refuse("trainable_token_indices", `names ${JSON.stringify(k)}; accepted: "embed_tokens", "lm_head"`);
          return v;
        })
      : [value];
  let range: { start: number; count: number } | undefined;
  for (const list of lists) {
    if (!Array.isArray(list) || list.length === 0 || !list.every((id, i) => Number.isSafeInteger(id) && id === list[0] + i)) {
      refuse("trainable_token_indices", "must list one contiguous range of ids (the reasoning vocabulary's rows)");
    }
    const here = { start: list[0] as number, count: list.length };
    if (range && (range.start !== here.start || range.count !== here.count)) {
      refuse("trainable_token_indices", "must list the same ids for embed_tokens and lm_head");
    }
    range = here;
  }
  return range;
}

function parseTargets(value: unknown): LinearModule[] {
  // PEFT's shorthand for every linear layer but the output head.
  if (value === "all-linear") return [...LINEAR_MODULES];
  if (!Array.isArray(value) || value.length === 0) {
    refuse(
      "target_modules",
      `is ${JSON.stringify(value)}; give a list of module names (${LINEAR_MODULES.join(", ")}) or "all-linear" (regular expressions are not supported)`,
    );
  }
  for (const name of value) {
    if (!(LINEAR_MODULES as readonly unknown[]).includes(name)) {
      refuse("target_modules", `names ${JSON.stringify(name)}; accepted: ${LINEAR_MODULES.join(", ")}`);
    }
  }
  return value as LinearModule[];
}

/** Builds an adapter for `modelConfig` from the two PEFT files' bytes (e.g. streamed over gRPC). */
export async function importPeftAdapter(files: PeftFiles, modelConfig: ModelConfig): Promise<LoraAdapter> {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(files[ADAPTER_CONFIG_FILE]));
  } catch (error) {
    // Not the parser's message: it quotes the file's text.
    throw new AdapterError(`${ADAPTER_CONFIG_FILE} is not valid JSON${jsonPosition(error)}`);
  }
  const config = parsePeftAdapterConfig(raw);
  const weights = await SafetensorsFile.fromBytes(files[ADAPTER_WEIGHTS_FILE], ADAPTER_WEIGHTS_FILE);
  const tensors = new Map<string, PeftTensor>();
  for (const info of weights.tensors.values()) {
    if (info.shape.length !== 2)
      throw new AdapterError(`${ADAPTER_WEIGHTS_FILE}: tensor "${info.name}" has shape [${info.shape.join(", ")}]; LoRA matrices are 2-D`);
    tensors.set(info.name, { key: info.name, shape: info.shape as [number, number], data: await weights.float32(info.name) });
  }
  const adapter = LoraAdapter.fromPeftTensors(modelConfig, config, tensors);
  // Every tensor must have been used: a stray key means targets the config does not declare.
  const expected = new Set(adapter.variables().map((v) => adapter.peftKeyOfVariable(v.name)));
  const stray = [...tensors.keys()].filter((key) => !expected.has(key));
  if (stray.length > 0) {
    adapter.dispose();
    throw new AdapterError(
      `${ADAPTER_WEIGHTS_FILE} holds tensors the config's target_modules and the model's layers do not explain: ${stray
        .slice(0, 3)
        .map((k) => `"${k}"`)
        .join(", ")}${stray.length > 3 ? ", ..." : ""}`,
    );
  }
  return adapter;
}

export async function loadPeftAdapter(directory: string, modelConfig: ModelConfig): Promise<LoraAdapter> {
  const read = async (file: string) => {
    try {
      return new Uint8Array(await readFile(path.join(directory, file)));
    } catch (error) {
      throw new AdapterError(
        `cannot read ${path.join(directory, file)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
  };
  return importPeftAdapter(
    { [ADAPTER_CONFIG_FILE]: await read(ADAPTER_CONFIG_FILE), [ADAPTER_WEIGHTS_FILE]: await read(ADAPTER_WEIGHTS_FILE) },
    modelConfig,
  );
}

/** Where JSON.parse stopped, without the text around it. */
function jsonPosition(error: unknown): string {
  const position = /at position (\d+)/.exec(error instanceof Error ? error.message : "");
  return position ? ` (at character ${Number(position[1]) + 1})` : "";
}
