// The `model.reasoning_*` config keys (docs/concepts/reasoning-vocabulary.md), one zod shape for
// the learner's and the inference service's model sections, so both read and refuse them alike;
// the markers are checked against the tokenizer when the model loads.
import { z } from "zod";
import {
  DEFAULT_REASONING_MARKERS,
  REASONING_MASK_MODES,
  validateReasoningSettings,
  type ReasoningSettings,
} from "./reasoning-settings.js";

export const REASONING_MODEL_KEYS = {
  /** n_r: reasoning rows, each a copy of a standard row; 0 (the default) is off. */
  reasoning_vocab_size: z.number().int().min(0).default(0),
  /** [start, end] of the thinking block, as text; tokenized and checked at load. */
  reasoning_markers: z.tuple([z.string(), z.string()]).default([...DEFAULT_REASONING_MARKERS] as [string, string]),
  /** Where reasoning ids may be sampled; the run's requests carry it. */
  reasoning_mask: z.enum(REASONING_MASK_MODES).default("free"),
  /** A reasoning_token_map.json (or a directory holding one) giving any source ids. */
  reasoning_map: z.string().min(1).optional(),
};

export interface ReasoningModelKeys {
  reasoning_vocab_size: number;
  reasoning_markers: [string, string];
  reasoning_mask: (typeof REASONING_MASK_MODES)[number];
  reasoning_map?: string | undefined;
}

export function reasoningSettings(model: ReasoningModelKeys): ReasoningSettings {
  return {
    size: model.reasoning_vocab_size,
    markers: model.reasoning_markers,
    mask: model.reasoning_mask,
    ...(model.reasoning_map !== undefined ? { mapFile: model.reasoning_map } : {}),
  };
}

/** Refuses settings that can never work (naming the key), before anything loads. */
export function refineReasoningKeys(model: ReasoningModelKeys, ctx: z.RefinementCtx): void {
  try {
    validateReasoningSettings(reasoningSettings(model));
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
  }
}
