// A merged Hugging Face model directory from a base model and a PEFT LoRA adapter, for
// vLLM and transformers to load without PEFT: W' = W + scaling·B·A on every adapted linear
// (lm's mergeLora, as `lean-grpo sft` merges), written in the dtype each tensor had in the
// base, beside the base's config.json, tokenizer files, chat template and generation config.
// An adapter with trainable token rows (a reasoning vocabulary) is refused: the merged model
// would need the expanded vocabulary and the reasoning mask, which neither loader applies.
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { AdapterFile } from "@lean-grpo/adapter-files";
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  expectedWeights,
  loadCheckpoint,
  loraScaling,
  mergeLora,
  parsePeftAdapterConfig,
  type PeftTensor,
  SafetensorsFile,
  serializeSafetensors,
  type TensorToWrite,
} from "@lean-grpo/lm";
import { ExportError } from "./run-adapter.js";

/** Files of a base model directory the merged one carries over unchanged, where the base has them. */
export const CARRIED_FILES = [
  "config.json",
  "generation_config.json",
  "tokenizer.json",
  "tokenizer_config.json",
  "special_tokens_map.json",
  "added_tokens.json",
  "vocab.json",
  "merges.txt",
  "tokenizer.model",
  "chat_template.jinja",
  "chat_template.json",
];

export interface MergeSummary {
  /** Linear weights the adapter changed. */
  merged: number;
  /** dtype of the written tensors (the base's), e.g. "BF16"; "mixed" when they differ. */
  dtype: string;
}

export async function writeMergedModel(base: string, adapter: readonly AdapterFile[], out: string): Promise<MergeSummary> {
  if (path.resolve(out) === path.resolve(base)) throw new ExportError("--out must differ from the base model directory");
  const { config, tensors } = await readAdapter(adapter);
  const checkpoint = await loadCheckpoint(base);
  const dtypes = await baseDtypes(base);
  mergeLora(checkpoint, tensors, loraScaling(config));
  const shapes = expectedWeights(checkpoint.config);
  const written: TensorToWrite[] = [...checkpoint.weights].map(([name, data]) => ({
    name,
    shape: shapes.get(name)!,
    data,
    dtype: dtypes.get(name) ?? "F32",
  }));
  await mkdir(out, { recursive: true });
  const present = new Set(await readdir(base));
  for (const file of CARRIED_FILES) if (present.has(file)) await copyFile(path.join(base, file), path.join(out, file));
  if (!present.has("generation_config.json")) await writeFile(path.join(out, "generation_config.json"), await generationConfig(base));
  await writeFile(path.join(out, "model.safetensors"), serializeSafetensors(written, { format: "pt" }));
  const kinds = new Set(written.map((t) => t.dtype));
  return {
    merged: tensors.filter((t) => t.key.endsWith(".lora_A.weight")).length,
    dtype: kinds.size === 1 ? [...kinds][0]! : "mixed",
  };
}

async function readAdapter(files: readonly AdapterFile[]) {
  const file = (name: string) => {
    const found = files.find((f) => f.path === name);
    if (!found) throw new ExportError(`the adapter has no ${name}`);
    return found.data;
  };
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(file(ADAPTER_CONFIG_FILE)));
  } catch (error) {
    if (error instanceof ExportError) throw error;
    throw new ExportError(`${ADAPTER_CONFIG_FILE} is not valid JSON`);
  }
  const config = parsePeftAdapterConfig(raw);
  if (config.tokenRows)
    throw new ExportError(
      "the adapter trains reasoning-vocabulary rows (trainable_token_indices): a merged model would need the expanded vocabulary and the reasoning mask, which transformers and vLLM do not apply; export it without --merge (docs/concepts/reasoning-vocabulary.md)",
    );
  const weights = await SafetensorsFile.fromBytes(file(ADAPTER_WEIGHTS_FILE), ADAPTER_WEIGHTS_FILE);
  const tensors: PeftTensor[] = [];
  for (const info of weights.tensors.values()) {
    if (!/\.lora_[AB]\.weight$/.test(info.name) || info.shape.length !== 2)
      throw new ExportError(`${ADAPTER_WEIGHTS_FILE}: tensor "${info.name}" is not a LoRA matrix (…lora_A.weight or …lora_B.weight, 2-D)`);
    tensors.push({ key: info.name, shape: info.shape as [number, number], data: await weights.float32(info.name) });
  }
  return { config, tensors };
}

/** The dtype of each tensor in the base's safetensors files (model.safetensors, or every shard). */
async function baseDtypes(base: string): Promise<Map<string, "F32" | "BF16" | "F16">> {
  const names = (await readdir(base)).filter((name) => name.endsWith(".safetensors"));
  const dtypes = new Map<string, "F32" | "BF16" | "F16">();
  for (const name of names) {
    const file = await SafetensorsFile.open(path.join(base, name));
    try {
      for (const info of file.tensors.values()) dtypes.set(info.name, info.dtype as "F32" | "BF16" | "F16");
    } finally {
      await file.close();
    }
  }
  return dtypes;
}

/** A generation_config.json from config.json's special token ids, for a base that has none. */
async function generationConfig(base: string): Promise<string> {
  const config = JSON.parse(await readFile(path.join(base, "config.json"), "utf8")) as Record<string, unknown>;
  const ids = Object.fromEntries(
    ["bos_token_id", "eos_token_id", "pad_token_id"].filter((key) => config[key] != null).map((key) => [key, config[key]]),
  );
  return `${JSON.stringify(ids, null, 2)}\n`;
}
