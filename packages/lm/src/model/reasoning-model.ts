// A model directory loaded with its reasoning vocabulary (docs/concepts/reasoning-vocabulary.md):
// the settings resolved against the model (n_s from config.json, markers through its
// tokenizer), the checkpoint expanded with copied rows, and the vocabulary attached to the
// model. A directory that already holds an expanded base (its reasoning_token_map.json next
// to config.json) takes n_s from that map, and must have the run's map.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { ModelCheckpointError, ReasoningVocabError } from "../errors.js";
import { expandCheckpoint } from "../reasoning-vocab/expand-checkpoint.js";
import { parseReasoningMap, REASONING_MAP_FILE } from "../reasoning-vocab/reasoning-map-file.js";
import { reasoningEnabled, validateReasoningSettings, type ReasoningSettings } from "../reasoning-vocab/reasoning-settings.js";
import { resolveReasoningVocabulary, type ReasoningVocabulary } from "../reasoning-vocab/reasoning-vocabulary.js";
import { ModelTokenizer } from "../tokenizer/model-tokenizer.js";
import { CausalLM } from "./causal-lm.js";
import { loadCheckpoint } from "./checkpoint.js";
import { parseModelConfig } from "./model-config.js";
import type { ModelWeightOptions } from "./model-weights.js";

async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return null;
  }
}

/**
 * The vocabulary `settings` describe for the model in `directory`, or undefined when they
 * leave it off. Every bad setting is refused with a ReasoningVocabError naming its key.
 */
export async function resolveModelReasoning(
  directory: string,
  settings: ReasoningSettings,
  prefix = "model.",
): Promise<ReasoningVocabulary | undefined> {
  validateReasoningSettings(settings, prefix);
  if (!reasoningEnabled(settings)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path.join(directory, "config.json"), "utf8"));
  } catch (error) {
    throw new ModelCheckpointError(`cannot read ${path.join(directory, "config.json")}: ${(error as Error).message}`);
  }
  const config = parseModelConfig(raw);
  const savedMap = await readOptional(path.join(directory, REASONING_MAP_FILE));
  const standardSize =
    savedMap === null ? config.vocabSize : parseReasoningMap(savedMap, path.join(directory, REASONING_MAP_FILE)).map.standardSize;
  const tokenizer = await ModelTokenizer.load(directory);
  const stopIds = [...config.eosTokenIds, ...(tokenizer.eosTokenId === undefined ? [] : [tokenizer.eosTokenId])];
  const vocab = await resolveReasoningVocabulary(settings, { standardSize, tokenizer, stopIds, prefix });
  if (vocab && savedMap !== null) {
    const saved = parseReasoningMap(savedMap, path.join(directory, REASONING_MAP_FILE)).map;
    if (saved.sha256 !== vocab.sha256) {
      throw new ReasoningVocabError(
        `${directory} holds a base expanded with another reasoning map (n_r ${saved.reasoningSize}, sha256 ${saved.sha256.slice(0, 12)}…); ${prefix}reasoning_vocab_size / ${prefix}reasoning_map must match it`,
      );
    }
  }
  return vocab;
}

/** Loads `directory`, expanded with `vocab`'s rows when given (a plain load otherwise). */
export async function loadReasoningModel(
  directory: string,
  vocab: ReasoningVocabulary | undefined,
  options: ModelWeightOptions = {},
): Promise<CausalLM> {
  if (!vocab) return CausalLM.load(directory, options);
  const model = CausalLM.fromCheckpoint(expandCheckpoint(await loadCheckpoint(directory), vocab.map), options);
  model.reasoning = vocab;
  return model;
}
