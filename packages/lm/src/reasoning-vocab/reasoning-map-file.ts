// reasoning_token_map.json: the map saved with every checkpoint, adapter and expanded base,
// so that whoever loads the rows knows which standard token each one copies. Format in
// docs/concepts/reasoning-vocabulary.md ("The map file"); a reader recomputes the hash.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ReasoningVocabError } from "../errors.js";
import { ReasoningTokenMap } from "./reasoning-map.js";
import type { ReasoningMarkers } from "./reasoning-settings.js";

export const REASONING_MAP_FILE = "reasoning_token_map.json";
export const REASONING_MAP_FORMAT = "lean-grpo.reasoning-token-map/1";

export interface ReasoningMapFileContents {
  map: ReasoningTokenMap;
  /** The markers the rows were trained with, when the file records them. */
  markers?: ReasoningMarkers;
}

export function serializeReasoningMap(map: ReasoningTokenMap, markers?: ReasoningMarkers): string {
  const body: Record<string, unknown> = {
    format: REASONING_MAP_FORMAT,
    standard_vocab_size: map.standardSize,
    reasoning_vocab_size: map.reasoningSize,
    source_ids: Array.from(map.sourceIds),
    multiplicities: Array.from(map.multiplicities),
  };
  if (markers) body.markers = { start: markers.start, end: markers.end, start_ids: [...markers.startIds], end_ids: [...markers.endIds] };
  body.sha256 = map.sha256;
  return `${JSON.stringify(body)}\n`;
}

const isIdList = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isSafeInteger(x) && x >= 0);

/** Parses a map file's text; `where` names the file or key in messages. */
export function parseReasoningMap(text: string, where: string): ReasoningMapFileContents {
  let body: Record<string, unknown>;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not a JSON object");
    body = value as Record<string, unknown>;
  } catch (error) {
    // Not the parser's message: V8 quotes the text it failed on, and a file is not the client's to read.
    const position = /at position (\d+)/.exec((error as Error).message);
    const why =
      (error as Error).message === "not a JSON object"
        ? "not a JSON object"
        : `not JSON${position ? ` at character ${Number(position[1]) + 1}` : ""}`;
    throw new ReasoningVocabError(`${where} is not a reasoning token map (${why})`);
  }
  if (body.format !== REASONING_MAP_FORMAT) {
    throw new ReasoningVocabError(`${where}: "format" is not "${REASONING_MAP_FORMAT}"`);
  }
  const standardSize = body.standard_vocab_size;
  if (!Number.isSafeInteger(standardSize) || (standardSize as number) < 1) {
    throw new ReasoningVocabError(`${where}: "standard_vocab_size" must be a positive integer`);
  }
  if (!isIdList(body.source_ids) || body.source_ids.length === 0) {
    throw new ReasoningVocabError(`${where}: "source_ids" must be a non-empty list of token ids`);
  }
  if (body.reasoning_vocab_size !== undefined && body.reasoning_vocab_size !== body.source_ids.length) {
    throw new ReasoningVocabError(
      `${where}: "reasoning_vocab_size" ${body.reasoning_vocab_size} differs from the ${body.source_ids.length} source ids`,
    );
  }
  const map = new ReasoningTokenMap(standardSize as number, Int32Array.from(body.source_ids));
  if (body.sha256 !== undefined && body.sha256 !== map.sha256) {
    throw new ReasoningVocabError(`${where}: "sha256" ${JSON.stringify(body.sha256)} is not the hash of its map (${map.sha256})`);
  }
  let markers: ReasoningMarkers | undefined;
  const m = body.markers as Record<string, unknown> | undefined;
  if (m !== undefined) {
    if (typeof m.start !== "string" || typeof m.end !== "string" || !isIdList(m.start_ids) || !isIdList(m.end_ids)) {
      throw new ReasoningVocabError(`${where}: "markers" must be {start, end, start_ids, end_ids}`);
    }
    markers = { start: m.start, end: m.end, startIds: m.start_ids, endIds: m.end_ids };
  }
  return { map, markers };
}

/** Reads a map file: a path to the JSON file, or a directory holding reasoning_token_map.json. */
export async function readReasoningMapFile(file: string, where = file): Promise<ReasoningMapFileContents> {
  let text: string;
  const target = file.endsWith(".json") ? file : path.join(file, REASONING_MAP_FILE);
  try {
    text = await readFile(target, "utf8");
  } catch (error) {
    throw new ReasoningVocabError(`${where}: cannot read ${target} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return parseReasoningMap(text, `${where} (${target})`);
}

/** Writes reasoning_token_map.json into a checkpoint or adapter directory. */
export async function writeReasoningMapFile(directory: string, map: ReasoningTokenMap, markers?: ReasoningMarkers): Promise<void> {
  await writeFile(path.join(directory, REASONING_MAP_FILE), serializeReasoningMap(map, markers));
}

/**
 * Refuses rows saved for another map: `text` is the directory's map file (null when it has
 * none). A directory without a map may not be loaded into a run with one, nor the reverse.
 */
export function checkSameReasoningMap(text: string | null, expected: ReasoningTokenMap | undefined, what: string): void {
  const saved = text === null ? undefined : parseReasoningMap(text, `${what} ${REASONING_MAP_FILE}`).map;
  if (saved === undefined && expected === undefined) return;
  if (saved === undefined) {
    throw new ReasoningVocabError(
      `${what} has no ${REASONING_MAP_FILE}, but this run has a reasoning vocabulary (model.reasoning_vocab_size ${expected!.reasoningSize}); it was saved without one`,
    );
  }
  if (expected === undefined) {
    throw new ReasoningVocabError(
      `${what} was saved with a reasoning vocabulary (${saved.reasoningSize} ids, map ${saved.sha256.slice(0, 12)}), but this run has none: set model.reasoning_vocab_size to match`,
    );
  }
  if (saved.sha256 !== expected.sha256) {
    throw new ReasoningVocabError(
      `${what} was saved with another reasoning map (n_s ${saved.standardSize}, n_r ${saved.reasoningSize}, sha256 ${saved.sha256.slice(0, 12)}…) ` +
        `than this run's (n_s ${expected.standardSize}, n_r ${expected.reasoningSize}, sha256 ${expected.sha256.slice(0, 12)}…): ` +
        "model.reasoning_vocab_size / model.reasoning_map must match the ones it was trained with",
    );
  }
}
