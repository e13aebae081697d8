// Expands a loaded base checkpoint to n_s + n_r rows: row n_s + i of the embedding (and of an
// untied head) is an exact copy of row map[i], so at initialisation the expanded model says
// exactly what the base says (a copy's logit equals its source's). A tied model stays tied:
// it has one matrix. Done on the host arrays before any tensor exists.
import { ModelCheckpointError } from "../errors.js";
import type { Checkpoint } from "../model/checkpoint.js";
import type { ReasoningTokenMap } from "./reasoning-map.js";

const EXPANDED = ["model.embed_tokens.weight", "lm_head.weight"] as const;

function copyRows(matrix: Float32Array, map: ReasoningTokenMap, hidden: number): Float32Array {
  const out = new Float32Array(map.totalSize * hidden);
  out.set(matrix.subarray(0, map.standardSize * hidden));
  map.sourceIds.forEach((source, i) => {
    out.set(matrix.subarray(source * hidden, (source + 1) * hidden), (map.standardSize + i) * hidden);
  });
  return out;
}

/**
 * The checkpoint with reasoning rows. A checkpoint that already has n_s + n_r rows (an
 * expanded base saved with its map) is returned as is; any other row count is refused.
 */
export function expandCheckpoint(checkpoint: Checkpoint, map: ReasoningTokenMap): Checkpoint {
  const { config } = checkpoint;
  if (config.vocabSize === map.totalSize) return checkpoint;
  if (config.vocabSize !== map.standardSize) {
    throw new ModelCheckpointError(
      `config.json vocab_size is ${config.vocabSize}, but the reasoning map is for ${map.standardSize} standard ids (expanded: ${map.totalSize})`,
    );
  }
  const weights = new Map(checkpoint.weights);
  for (const name of EXPANDED) {
    const matrix = checkpoint.weights.get(name);
    if (matrix) weights.set(name, copyRows(matrix, map, config.hiddenSize));
  }
  return { config: { ...config, vocabSize: map.totalSize }, weights };
}
