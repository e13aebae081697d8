// The map from reasoning ids to their source ids: reasoning id n_s + i copies standard id
// sourceIds[i]. n_s is the base model's config vocab_size (never the tokenizer's size: Qwen
// pads its matrix, and the tokenizer's size would shift every reasoning id onto the wrong
// source). The hash covers exactly what fixes the ids' meaning, n_s and the sources.
import { createHash } from "node:crypto";
import { ReasoningVocabError } from "../errors.js";

export class ReasoningTokenMap {
  /** multiplicities[i]: which copy of its source reasoning id n_s + i is (1 = the first). */
  readonly multiplicities: Int32Array;
  /** Lowercase hex SHA-256 of `${n_s}:${sourceIds.join(",")}`. */
  readonly sha256: string;
  /** Copies of each standard id, for ln(k + 1) in the equivalence checks. */
  private readonly copies: Map<number, number>;

  constructor(
    /** n_s: rows of the base model before expansion. */
    readonly standardSize: number,
    /** sourceIds[i] is the standard id that reasoning id n_s + i copies. */
    readonly sourceIds: Int32Array,
  ) {
    if (!Number.isSafeInteger(standardSize) || standardSize < 1)
      throw new ReasoningVocabError(`standard vocabulary size ${standardSize} must be >= 1`);
    this.multiplicities = new Int32Array(sourceIds.length);
    this.copies = new Map();
    sourceIds.forEach((source, i) => {
      if (!Number.isInteger(source) || source < 0 || source >= standardSize) {
        throw new ReasoningVocabError(
          `model.reasoning_map: source id ${source} of reasoning id ${standardSize + i} is not a standard id (0..${standardSize - 1})`,
        );
      }
      const k = (this.copies.get(source) ?? 0) + 1;
      this.copies.set(source, k);
      this.multiplicities[i] = k;
    });
    this.sha256 = reasoningMapHash(standardSize, sourceIds);
  }

  /** n_r. */
  get reasoningSize(): number {
    return this.sourceIds.length;
  }

  /** Rows of the expanded model, n_s + n_r. */
  get totalSize(): number {
    return this.standardSize + this.sourceIds.length;
  }

  isReasoning(id: number): boolean {
    return id >= this.standardSize;
  }

  /** The standard id a token reads as: itself, or the source of a reasoning id. */
  source(id: number): number {
    if (id < this.standardSize) return id;
    const source = this.sourceIds[id - this.standardSize];
    if (source === undefined) throw new ReasoningVocabError(`token id ${id} is beyond the expanded vocabulary (${this.totalSize} ids)`);
    return source;
  }

  /** Number of reasoning copies of a standard id (0 when it has none). */
  copiesOf(standardId: number): number {
    return this.copies.get(standardId) ?? 0;
  }
}

/** The default map: reasoning id n_s + i copies standard id i, for i < n_r (n_r <= n_s). */
export function defaultReasoningMap(standardSize: number, reasoningSize: number, key = "model.reasoning_vocab_size"): ReasoningTokenMap {
  if (!Number.isSafeInteger(reasoningSize) || reasoningSize < 1)
    throw new ReasoningVocabError(`${key} ${reasoningSize} must be an integer >= 1`);
  if (reasoningSize > standardSize) {
    throw new ReasoningVocabError(
      `${key} ${reasoningSize} is larger than the model's standard vocabulary (config.json vocab_size ${standardSize}); ` +
        `the default map copies ids 0..n_r-1 once, so n_r <= ${standardSize}. For several copies of a token, give model.reasoning_map`,
    );
  }
  return new ReasoningTokenMap(
    standardSize,
    Int32Array.from({ length: reasoningSize }, (_, i) => i),
  );
}

/** Lowercase hex SHA-256 of the UTF-8 string `${n_s}:${sourceIds.join(",")}` (docs: "The map file"). */
export function reasoningMapHash(standardSize: number, sourceIds: ArrayLike<number>): string {
  return createHash("sha256")
    .update(`${standardSize}:${Array.from(sourceIds).join(",")}`, "utf8")
    .digest("hex");
}
