// A dataset file as rows, whatever its format: how many there are (known after opening, from
// an index built by one streaming pass or from the format's own metadata) and any range of
// them read on demand, so a multi-GB corpus is never held in memory whole.

/** One row as its file holds it: the record, or why it is not one. */
export interface SourceRow {
  /** 0-based position in the dataset. */
  index: number;
  /** Where a person finds it: "line 12" (JSONL) or "row 12" (parquet, Arrow). */
  where: string;
  record?: Record<string, unknown>;
  error?: string;
}

export interface RecordSource {
  /** What it is, for messages: "JSONL", "parquet (3 row groups)", "datasets folder (split train)". */
  readonly kind: string;
  readonly rows: number;
  /** Bytes on disk (all of its files). */
  readonly bytes: number;
  /** Rows [start, end), in order. */
  read(start: number, end: number): Promise<SourceRow[]>;
  close(): Promise<void>;
}
