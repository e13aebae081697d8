// Loads a Hugging Face model directory: config.json plus model.safetensors, or the shards
// listed by model.safetensors.index.json. Every tensor the config implies must be there
// with the right shape, and nothing else (a mismatch usually means the wrong model_type);
// weights are widened to float32 one tensor at a time.
import { access, readFile } from "node:fs/promises";
import path from "node:path";
import { ModelCheckpointError } from "../errors.js";
import { SafetensorsFile } from "../safetensors/safetensors-reader.js";
import { parseModelConfig, type ModelConfig } from "./model-config.js";
import { expectedWeights, isIgnorableWeight } from "./weight-names.js";

export interface Checkpoint {
  config: ModelConfig;
  /** HF tensor name to float32 data, row-major in the HF shape. */
  weights: Map<string, Float32Array>;
}

async function readJson(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ModelCheckpointError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ModelCheckpointError(`${file} is not valid JSON (${(error as Error).message})`);
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** Which file holds each tensor: one model.safetensors, or the index's weight_map. */
async function weightFiles(directory: string): Promise<Map<string, string[]>> {
  const indexFile = path.join(directory, "model.safetensors.index.json");
  const singleFile = path.join(directory, "model.safetensors");
  if (await exists(indexFile)) {
    const index = (await readJson(indexFile, "shard index")) as { weight_map?: unknown };
    const map = index?.weight_map;
    if (typeof map !== "object" || map === null || Array.isArray(map)) {
      throw new ModelCheckpointError(`${indexFile}: "weight_map" must be an object of tensor name -> shard file`);
    }
    const byFile = new Map<string, string[]>();
    for (const [name, file] of Object.entries(map)) {
      if (typeof file !== "string" || file.includes("/") || file.includes("\\")) {
        throw new ModelCheckpointError(`${indexFile}: weight_map["${name}"] must be a file name in the same directory`);
      }
      byFile.set(file, [...(byFile.get(file) ?? []), name]);
    }
    return byFile;
  }
  if (await exists(singleFile)) return new Map([["model.safetensors", []]]);
  throw new ModelCheckpointError(
    `${directory} has neither model.safetensors nor model.safetensors.index.json (only safetensors checkpoints are read; convert pytorch_model.bin first)`,
  );
}

export async function loadCheckpoint(directory: string): Promise<Checkpoint> {
  const config = parseModelConfig(await readJson(path.join(directory, "config.json"), "model config"));
  const expected = expectedWeights(config);
  const weights = new Map<string, Float32Array>();
  for (const [file, listed] of await weightFiles(directory)) {
    const safetensors = await SafetensorsFile.open(path.join(directory, file));
    try {
      for (const name of listed) {
        if (!safetensors.tensors.has(name)) {
          throw new ModelCheckpointError(`${safetensors.source}: the shard index puts "${name}" here but the file does not hold it`);
        }
      }
      for (const info of safetensors.tensors.values()) {
        const shape = expected.get(info.name);
        if (!shape) {
          if (isIgnorableWeight(config, info.name)) continue;
          throw new ModelCheckpointError(
            `${safetensors.source}: unexpected tensor "${info.name}" for a ${config.modelType} model with ${config.numLayers} layers (wrong model_type or config.json?)`,
          );
        }
        if (shape.length !== info.shape.length || shape.some((d, i) => d !== info.shape[i])) {
          throw new ModelCheckpointError(
            `${safetensors.source}: tensor "${info.name}" has shape [${info.shape.join(", ")}] but config.json implies [${shape.join(", ")}]`,
          );
        }
        if (weights.has(info.name)) throw new ModelCheckpointError(`${safetensors.source}: tensor "${info.name}" appears in two shards`);
        weights.set(info.name, await safetensors.float32(info.name));
      }
    } finally {
      await safetensors.close();
    }
  }
  const missing = [...expected.keys()].filter((name) => !weights.has(name));
  if (missing.length > 0) {
    const shown = missing
      .slice(0, 5)
      .map((n) => `"${n}"`)
      .join(", ");
    throw new ModelCheckpointError(
      `${directory}: ${missing.length} tensor(s) the config needs are missing: ${shown}${missing.length > 5 ? ", ..." : ""}`,
    );
  }
  return { config, weights };
}
