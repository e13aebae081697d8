// The `model.reasoning_*` settings as every service reads them (docs/concepts/reasoning-vocabulary.md):
// the size n_r, the two markers, the mask mode and an optional map file. Checked here for what
// can be checked without the model; the markers and n_s are checked at load
// (reasoning-vocabulary.ts).
import { ReasoningVocabError } from "../errors.js";

export const REASONING_MASK_MODES = ["free", "gated", "strict"] as const;
/** free: any id anywhere; gated: reasoning ids only inside the block; strict: inside it only reasoning ids and the end marker. */
export type ReasoningMaskMode = (typeof REASONING_MASK_MODES)[number];

export const DEFAULT_REASONING_MARKERS: readonly [string, string] = Object.freeze(["<think>", "</think>"]) as readonly [string, string];

/** The block's start and end markers, as text and as token ids in the standard half. */
export interface ReasoningMarkers {
  start: string;
  end: string;
  startIds: readonly number[];
  endIds: readonly number[];
}

export interface ReasoningSettings {
  /** n_r, the number of reasoning rows; 0 turns the feature off. With `mapFile`, undefined means the map's length. */
  size: number | undefined;
  /** [start, end] marker texts. */
  markers: readonly [string, string];
  /** The mask mode the run samples and trains under. */
  mask: ReasoningMaskMode;
  /** A reasoning_token_map.json giving any source ids (repeats allowed). */
  mapFile?: string;
}

export const REASONING_OFF: ReasoningSettings = Object.freeze({ size: 0, markers: DEFAULT_REASONING_MARKERS, mask: "free" });

/** True when the settings ask for reasoning rows (a size > 0 or a map file). */
export function reasoningEnabled(settings: ReasoningSettings | undefined): settings is ReasoningSettings {
  return settings !== undefined && (settings.mapFile !== undefined || (settings.size ?? 0) > 0);
}

/** Throws a ReasoningVocabError naming the key (`${prefix}reasoning_...`) for settings that can never work. */
export function validateReasoningSettings(settings: ReasoningSettings, prefix = "model."): void {
  const { size, markers, mask } = settings;
  if (size !== undefined && (!Number.isSafeInteger(size) || size < 0)) {
    throw new ReasoningVocabError(`${prefix}reasoning_vocab_size ${size} must be an integer >= 0 (0 turns the reasoning vocabulary off)`);
  }
  if (!(REASONING_MASK_MODES as readonly string[]).includes(mask)) {
    throw new ReasoningVocabError(`${prefix}reasoning_mask "${mask}" is not one of ${REASONING_MASK_MODES.join(", ")}`);
  }
  if (!Array.isArray(markers) || markers.length !== 2 || markers.some((m) => typeof m !== "string")) {
    throw new ReasoningVocabError(`${prefix}reasoning_markers must be two strings [start, end], e.g. ["<think>", "</think>"]`);
  }
  markers.forEach((marker, i) => {
    if (marker.length === 0) throw new ReasoningVocabError(`${prefix}reasoning_markers[${i}] is empty; a marker must be non-empty text`);
  });
  if (markers[0] === markers[1]) {
    throw new ReasoningVocabError(`${prefix}reasoning_markers: start and end are both "${markers[0]}"; they must differ`);
  }
  if (!reasoningEnabled(settings) && mask !== "free") {
    throw new ReasoningVocabError(
      `${prefix}reasoning_mask "${mask}" needs a reasoning vocabulary: set ${prefix}reasoning_vocab_size > 0 (or ${prefix}reasoning_map), or use "free"`,
    );
  }
}
