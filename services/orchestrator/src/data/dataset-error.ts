// A dataset that cannot be used, with every problem found (line number and field), so a
// run never starts half-loaded.
export interface DatasetIssue {
  /** 1-based line of the JSONL file, or row of the dataset (0 for the file as a whole). */
  line: number;
  /** How a person finds it ("line 12", "row 12"); default "line N". */
  where?: string;
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
    super(describeIssues(source, issues));
    this.name = "DatasetError";
  }
}

function describeIssues(source: string, issues: readonly DatasetIssue[]): string {
  const where = (i: DatasetIssue) => `${i.line > 0 ? (i.where ?? `line ${i.line}`) : "the file"}${i.field ? `, field "${i.field}"` : ""}`;
  if (issues.length === 1) {
    // One problem: one line that says where and what.
    const only = issues[0]!;
    return `dataset ${source}${only.line > 0 || only.field ? `, ${where(only)}` : ""}: ${only.message}; nothing was loaded`;
  }
  const lines = issues.slice(0, SHOWN).map((i) => `  ${where(i)}: ${i.message}`);
  if (issues.length > SHOWN) lines.push(`  ... and ${issues.length - SHOWN} more`);
  return `dataset ${source} has ${issues.length} bad records or fields; nothing was loaded:\n${lines.join("\n")}`;
}
