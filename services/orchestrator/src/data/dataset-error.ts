// A dataset that cannot be used, with every problem found (line number and field), so a
// run never starts half-loaded.
export interface DatasetIssue {
  /** 1-based line of the JSONL file (0 for the file as a whole). */
  line: number;
  /** The field that is wrong, or "" for the whole record. */
  field: string;
  message: string;
}

const SHOWN = 20;

export class DatasetError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly DatasetIssue[],
  ) {
    const lines = issues
      .slice(0, SHOWN)
      .map((i) => `  ${i.line > 0 ? `line ${i.line}` : "file"}${i.field ? `, field "${i.field}"` : ""}: ${i.message}`);
    if (issues.length > SHOWN) lines.push(`  ... and ${issues.length - SHOWN} more`);
    super(
      `dataset ${source} is invalid (${issues.length} problem${issues.length === 1 ? "" : "s"}); nothing was loaded:\n${lines.join("\n")}`,
    );
    this.name = "DatasetError";
  }
}
