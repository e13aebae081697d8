// Every dataset file (training set, held-out set, Evaluate's problems, the CLI's pre-flight)
// is read here, whatever its format (formats/open-record-source.ts) and layout
// (dataset-layout.ts). A set up to max_dataset_bytes is validated whole before it is used: a
// run starts with all of it or not at all. A larger one is streamed: its rows are read on
// demand, a sample (the first rows and rows spread over the rest) is validated before the run
// starts, and every batch is validated as it is read, a bad record stopping the run naming its
// row and field.
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { screenTheorem } from "@lean-grpo/lean";
import { parseJsonLines } from "@lean-grpo/jsonl";
import { PathError, type PathRoot } from "@lean-grpo/kit";
import { DatasetError, type DatasetIssue } from "./dataset-error.js";
import { resolveLayout } from "./dataset-layout.js";
import { AUTO_OPTIONS, type DatasetOptions } from "./dataset-options.js";
import { rootPlace, type DatasetPlace } from "./dataset-place.js";
import { openRecordSource, type RecordSource, type SourceRow } from "./formats/open-record-source.js";
import { theoremFromRecord, type RecordReading } from "./theorem-record.js";

/** Where a dataset file may be read from and how much of it is validated whole: the orchestrator's data_root. */
export interface DatasetFiles {
  root: PathRoot;
  maxBytes: number;
}

/** Rows validated before a streamed set starts: this many from its start and as many spread over the rest. */
export const SAMPLE_ROWS = 256;

/** A dataset opened for reading: its size, and any of its records on demand, validated. */
export class OpenedDataset {
  constructor(
    readonly name: string,
    private readonly source: RecordSource,
    readonly reading: RecordReading,
  ) {}

  get size(): number {
    return this.source.rows;
  }

  get bytes(): number {
    return this.source.bytes;
  }

  /** What was opened, for logs: "parquet (3 row groups), layout proofnet (detected from the columns)". */
  get description(): string {
    return `${this.source.kind}, ${this.size} records, layout ${this.reading.layout.name} (${this.reading.layout.how})`;
  }

  /** Records [start, end), validated; throws DatasetError naming every bad row and field. */
  async range(start: number, end: number): Promise<Theorem[]> {
    return this.validated(await this.source.read(start, end));
  }

  /** The records at these positions, in the order asked (a training batch). */
  async at(indices: readonly number[]): Promise<Theorem[]> {
    // Read in file order (a parquet row group or Arrow batch is decoded once per batch), returned in the order asked.
    const byIndex = new Map<number, SourceRow>();
    for (const index of [...new Set(indices)].sort((a, b) => a - b)) {
      const [row] = await this.source.read(index, index + 1);
      if (row) byIndex.set(index, row);
    }
    return this.validated(indices.map((index) => byIndex.get(index)!));
  }

  /** The first SAMPLE_ROWS records and SAMPLE_ROWS spread evenly over the rest: what a streamed set is checked by before it starts. */
  async sample(size = this.size): Promise<Theorem[]> {
    const head = Math.min(SAMPLE_ROWS, size);
    const rows = await this.source.read(0, head);
    const rest = size - head;
    const stride = rest / SAMPLE_ROWS;
    for (let i = 0; i < Math.min(SAMPLE_ROWS, rest); i++) {
      const index = head + Math.floor(i * stride);
      rows.push(...(await this.source.read(index, index + 1)));
    }
    return this.validated(rows);
  }

  close(): Promise<void> {
    return this.source.close();
  }

  private validated(rows: readonly SourceRow[]): Theorem[] {
    const issues: DatasetIssue[] = [];
    const theorems: Theorem[] = [];
    for (const row of rows) {
      if (row.error !== undefined) {
        issues.push({ line: row.index + 1, where: row.where, field: "", message: row.error });
        continue;
      }
      const result = theoremFromRecord(row.record, `row-${row.index + 1}`, this.reading);
      issues.push(...result.issues.map((issue) => ({ line: row.index + 1, where: row.where, ...issue })));
      if (result.theorem) theorems.push(result.theorem);
    }
    if (issues.length > 0) throw new DatasetError(this.name, issues);
    return theorems;
  }
}

/** Opens `given` in `place` by what it is (folder, .parquet, else JSONL) and settles its layout from the first record. */
export async function openDataset(place: DatasetPlace, given: string, options: DatasetOptions = AUTO_OPTIONS): Promise<OpenedDataset> {
  let source: RecordSource;
  try {
    source = await openRecordSource(place, given, options.split !== undefined ? { split: options.split } : {});
  } catch (error) {
    if (error instanceof Error && error.name === "PathError") throw error;
    throw new DatasetError(given, [{ line: 0, field: "", message: (error as Error).message }]);
  }
  const first = (await source.read(0, 1))[0];
  const columns = new Set(Object.keys(first?.record ?? {}));
  const layout = resolveLayout(options.layout, options.fields, columns);
  return new OpenedDataset(given, source, { layout, header: options.header });
}

/**
 * Every row of a file or folder as records, by the same format readers, for a command whose
 * records are not theorems (proofs to verify, warm-start pairs): it checks its own fields and
 * names rows by `where` ("line 3", "row 3"). A row that is not an object is an error here.
 */
export async function readDatasetRows(place: DatasetPlace, given: string): Promise<{ where: string; record: Record<string, unknown> }[]> {
  const source = await openRecordSource(place, given);
  try {
    const rows = await source.read(0, source.rows);
    const bad = rows.find((row) => row.error !== undefined);
    if (bad) throw new Error(`${rowPlace(given, bad.where)}: ${bad.error}`);
    return rows.map((row) => ({ where: rowPlace(given, row.where), record: row.record! }));
  } finally {
    await source.close();
  }
}

/** A row as a person finds it: "file.jsonl:3" for a line (what editors jump to), "file.parquet, row 3" otherwise. */
function rowPlace(given: string, where: string): string {
  return where.startsWith("line ") ? `${given}:${where.slice("line ".length)}` : `${given}, ${where}`;
}

/** Reads a whole set (held-out problems, Evaluate's) and validates every record: ids unique, a task in each. */
export async function readWholeDataset(dataset: OpenedDataset, maxBytes: number, field: string): Promise<Theorem[]> {
  // A set read whole is held in memory: over the cap it is refused before a row is read (a training set is streamed instead).
  if (dataset.bytes > maxBytes)
    throw new PathError(`${field} "${dataset.name}" is larger than ${maxBytes} bytes, the most this server reads`, field, "too_large");
  return uniqueIds(dataset.name, await dataset.range(0, dataset.size));
}

/**
 * Reads `given` (relative to the data root) whole and validates it; `field` is the request field
 * or config key it came from. Refused paths throw PathError (kit/paths), named by field.
 */
export async function loadDataset(
  files: DatasetFiles,
  given: string,
  field: string,
  options: DatasetOptions = AUTO_OPTIONS,
): Promise<Theorem[]> {
  const dataset = await openDataset(rootPlace(files.root, field), given, options);
  try {
    return await readWholeDataset(dataset, files.maxBytes, field);
  } finally {
    await dataset.close();
  }
}

function uniqueIds(source: string, theorems: Theorem[]): Theorem[] {
  const issues: DatasetIssue[] = [];
  const firstOfId = new Map<string, number>();
  theorems.forEach((theorem, index) => {
    const seen = firstOfId.get(theorem.id);
    if (seen !== undefined)
      issues.push({
        line: index + 1,
        where: `record ${index + 1}`,
        field: "id",
        message: `is the id of record ${seen} too; ids must be unique`,
      });
    else firstOfId.set(theorem.id, index + 1);
  });
  if (theorems.length === 0) issues.push({ line: 0, field: "", message: "has no records" });
  if (issues.length > 0) throw new DatasetError(source, issues);
  return theorems;
}

/** JSONL text already in memory (a run's own dataset.jsonl, tests): the same validation as a file. */
export function parseDataset(text: string, source: string, reading?: RecordReading): Theorem[] {
  const issues: DatasetIssue[] = [];
  const theorems: Theorem[] = [];
  const firstLineOfId = new Map<string, number>();
  for (const { line, value: record, error } of parseJsonLines(text)) {
    if (error !== undefined) {
      issues.push({ line, field: "", message: error });
      continue;
    }
    const result = theoremFromRecord(record, `line-${line}`, reading);
    issues.push(...result.issues.map((issue) => ({ line, ...issue })));
    if (!result.theorem) continue;
    const seen = firstLineOfId.get(result.theorem.id);
    if (seen !== undefined) {
      issues.push({ line, field: "id", message: `is the id of line ${seen} too; ids must be unique` });
      continue;
    }
    firstLineOfId.set(result.theorem.id, line);
    theorems.push(result.theorem);
  }
  if (issues.length === 0 && theorems.length === 0) issues.push({ line: 0, field: "", message: "has no records" });
  if (issues.length > 0) throw new DatasetError(source, issues);
  return theorems;
}

/** Checks an inline dataset (StartRunRequest.theorems) the same way: ids unique, a task in each. */
export function validateInlineTheorems(theorems: readonly Theorem[]): void {
  const issues: DatasetIssue[] = [];
  const seen = new Map<string, number>();
  theorems.forEach((theorem, index) => {
    const line = index + 1;
    if (!theorem.id) issues.push({ line, field: "id", message: "is empty" });
    if (!theorem.statement && !(theorem.informalStatement && theorem.answer)) {
      issues.push({
        line,
        field: "statement",
        message: "a theorem needs a Lean statement, or informal_statement + answer for a math task",
      });
    }
    const screen = screenTheorem(theorem);
    if (!screen.ok) issues.push({ line, field: screen.field, message: screen.reason });
    const first = seen.get(theorem.id);
    if (first !== undefined) issues.push({ line, field: "id", message: `"${theorem.id}" is already used by theorem ${first}` });
    seen.set(theorem.id, line);
  });
  if (theorems.length === 0) issues.push({ line: 0, field: "", message: "has no theorems" });
  if (issues.length > 0) throw new DatasetError("inline theorems", issues);
}
