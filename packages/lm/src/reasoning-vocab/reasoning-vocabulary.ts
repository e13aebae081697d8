// A model's resolved reasoning vocabulary: the map (n_s, sources) and the markers as token-id
// sequences in the standard half. Resolved once at load from the settings, the base model's
// config vocab_size and its tokenizer; every bad setting is refused here, naming its key.
import { ReasoningVocabError } from "../errors.js";
import { defaultReasoningMap, type ReasoningTokenMap } from "./reasoning-map.js";
import { readReasoningMapFile } from "./reasoning-map-file.js";
import { validateReasoningSettings, type ReasoningMarkers, type ReasoningMaskMode, type ReasoningSettings } from "./reasoning-settings.js";

export type { ReasoningMarkers };

/** What marker validation needs of a tokenizer (ModelTokenizer has it). */
export interface MarkerTokenizer {
  encode(text: string, options?: { addSpecialTokens?: boolean }): number[];
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
}

export class ReasoningVocabulary {
  constructor(
    readonly map: ReasoningTokenMap,
    readonly markers: ReasoningMarkers,
    /** The mask mode configured for the run (requests may carry their own). */
    readonly mask: ReasoningMaskMode,
  ) {}

  get standardSize(): number {
    return this.map.standardSize;
  }
  get reasoningSize(): number {
    return this.map.reasoningSize;
  }
  get totalSize(): number {
    return this.map.totalSize;
  }
  get sha256(): string {
    return this.map.sha256;
  }
  source(id: number): number {
    return this.map.source(id);
  }
  isReasoning(id: number): boolean {
    return this.map.isReasoning(id);
  }
  /** The run metadata's record of it. */
  describe(): { n_s: number; n_r: number; map_sha256: string; mask: ReasoningMaskMode; markers: [string, string] } {
    return {
      n_s: this.standardSize,
      n_r: this.reasoningSize,
      map_sha256: this.sha256,
      mask: this.mask,
      markers: [this.markers.start, this.markers.end],
    };
  }
}

export interface ResolveReasoningOptions {
  /** n_s: the base model's config.json vocab_size (before expansion). */
  standardSize: number;
  tokenizer: MarkerTokenizer;
  /** Ids that end a completion (EOS); a marker may not contain one. */
  stopIds?: readonly number[];
  /** Key prefix for messages; "model." by default. */
  prefix?: string;
}

/** Encodes one marker and checks that it is a usable id sequence in the standard half. */
export function markerIds(text: string, index: 0 | 1, options: ResolveReasoningOptions): number[] {
  const key = `${options.prefix ?? "model."}reasoning_markers[${index}]`;
  let ids: number[];
  try {
    ids = options.tokenizer.encode(text, { addSpecialTokens: false });
  } catch (error) {
    throw new ReasoningVocabError(`${key} ${JSON.stringify(text)} does not tokenize: ${(error as Error).message}`);
  }
  if (ids.length === 0) throw new ReasoningVocabError(`${key} ${JSON.stringify(text)} tokenizes to no ids`);
  const back = options.tokenizer.decode(ids);
  if (back !== text) {
    throw new ReasoningVocabError(
      `${key} ${JSON.stringify(text)} does not tokenize to itself: its ids [${ids.join(", ")}] decode to ${JSON.stringify(back)}`,
    );
  }
  const outside = ids.find((id) => id >= options.standardSize);
  if (outside !== undefined) {
    throw new ReasoningVocabError(
      `${key} ${JSON.stringify(text)} has id ${outside}, outside the standard vocabulary (0..${options.standardSize - 1})`,
    );
  }
  const stop = ids.find((id) => options.stopIds?.includes(id));
  if (stop !== undefined) {
    throw new ReasoningVocabError(`${key} ${JSON.stringify(text)} contains the end-of-sequence id ${stop}: nothing could follow it`);
  }
  return ids;
}

/**
 * The vocabulary the settings describe for a model, or undefined when they leave it off.
 * Reads `settings.mapFile` when given (its n_s must be the model's).
 */
export async function resolveReasoningVocabulary(
  settings: ReasoningSettings,
  options: ResolveReasoningOptions,
): Promise<ReasoningVocabulary | undefined> {
  const prefix = options.prefix ?? "model.";
  validateReasoningSettings(settings, prefix);
  let map: ReasoningTokenMap;
  if (settings.mapFile !== undefined) {
    map = (await readReasoningMapFile(settings.mapFile, `${prefix}reasoning_map`)).map;
    if (map.standardSize !== options.standardSize) {
      throw new ReasoningVocabError(
        `${prefix}reasoning_map ${settings.mapFile} is for a model with ${map.standardSize} standard ids; this model's config.json vocab_size is ${options.standardSize}`,
      );
    }
    if (settings.size !== undefined && settings.size !== 0 && settings.size !== map.reasoningSize) {
      throw new ReasoningVocabError(
        `${prefix}reasoning_vocab_size ${settings.size} differs from the ${map.reasoningSize} reasoning ids of ${prefix}reasoning_map; leave the size out or make them equal`,
      );
    }
  } else {
    if ((settings.size ?? 0) === 0) return undefined;
    map = defaultReasoningMap(options.standardSize, settings.size!, `${prefix}reasoning_vocab_size`);
  }
  const startIds = markerIds(settings.markers[0], 0, options);
  const endIds = markerIds(settings.markers[1], 1, options);
  if (startIds.join(",") === endIds.join(",")) {
    throw new ReasoningVocabError(`${prefix}reasoning_markers: start and end tokenize to the same ids [${startIds.join(", ")}]`);
  }
  return new ReasoningVocabulary(map, { start: settings.markers[0], end: settings.markers[1], startIds, endIds }, settings.mask);
}
