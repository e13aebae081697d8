// JSONL as rows. Opening streams the file once, in fixed-size chunks, and keeps only where each
// non-blank line starts (8 bytes a row) and its line number; a range of rows is then read back
// with one positioned read. Memory: the index plus one chunk, whatever the file's size.
import type { FileHandle } from "node:fs/promises";
import { jsonErrorPlace } from "@lean-grpo/jsonl";
import type { OpenedDatasetFile } from "../dataset-place.js";
import type { RecordSource, SourceRow } from "./record-source.js";

const CHUNK = 1 << 20;
const NEWLINE = 0x0a;

/** A growable column of numbers (row offsets, line numbers) in typed memory. */
class NumberColumn {
  private values = new Float64Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }
  at(index: number): number {
    return this.values[index]!;
  }
}

export async function openJsonlSource(file: OpenedDatasetFile): Promise<RecordSource> {
  const { handle, size } = file;
  const starts = new NumberColumn();
  const lines = new NumberColumn();
  const buffer = Buffer.allocUnsafe(CHUNK);
  // The line being scanned: where it starts in the file and whether a non-blank byte was seen yet.
  let lineStart = 0;
  let lineNumber = 1;
  let blank = true;
  const endLine = (next: number) => {
    if (!blank) {
      starts.push(lineStart);
      lines.push(lineNumber);
    }
    lineNumber++;
    lineStart = next;
    blank = true;
  };
  for (let position = 0; position < size; ) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, size - position), position);
    if (bytesRead === 0) break;
    // memchr-speed search for newlines; a line's bytes are looked at only until its first non-blank one.
    for (let i = 0; i < bytesRead; ) {
      const newline = buffer.indexOf(NEWLINE, i);
      const stop = newline < 0 || newline >= bytesRead ? bytesRead : newline;
      for (let j = i; blank && j < stop; j++) {
        const byte = buffer[j]!;
        if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) blank = false;
      }
      if (stop === bytesRead) break;
      endLine(position + stop + 1);
      i = stop + 1;
    }
    position += bytesRead;
  }
  if (!blank) {
    starts.push(lineStart);
    lines.push(lineNumber);
  }
  return new JsonlSource(handle, size, starts, lines);
}

class JsonlSource implements RecordSource {
  readonly kind = "JSONL";
  constructor(
    private readonly handle: FileHandle,
    private readonly size: number,
    private readonly starts: NumberColumn,
    private readonly lines: NumberColumn,
  ) {}

  get bytes(): number {
    return this.size;
  }

  get rows(): number {
    return this.starts.length;
  }

  async read(start: number, end: number): Promise<SourceRow[]> {
    end = Math.min(end, this.rows);
    if (start >= end) return [];
    const from = this.starts.at(start);
    const to = end < this.rows ? this.starts.at(end) : this.size;
    const bytes = Buffer.allocUnsafe(to - from);
    await this.handle.read(bytes, 0, bytes.length, from);
    const rows: SourceRow[] = [];
    for (let index = start; index < end; index++) {
      const lineFrom = this.starts.at(index) - from;
      const lineTo = index + 1 < end ? this.starts.at(index + 1) - from : bytes.length;
      const text = bytes.toString("utf8", lineFrom, lineTo);
      rows.push(parseLine(index, `line ${this.lines.at(index)}`, text));
    }
    return rows;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

function parseLine(index: number, where: string, text: string): SourceRow {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { index, where, error: `not valid JSON${jsonErrorPlace(error)}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return {
      index,
      where,
      error: `expected a JSON object, got ${value === null ? "null" : Array.isArray(value) ? "a list" : `a ${typeof value}`}`,
    };
  return { index, where, record: value as Record<string, unknown> };
}
