// Parquet as rows, through hyparquet (and hyparquet-compressors for snappy, gzip, zstd, brotli,
// lz4): opening reads only the footer (row counts per row group); a range of rows reads only
// the row groups it touches, column chunk by column chunk, straight from the file.
import { parquetMetadataAsync, parquetReadObjects, type AsyncBuffer, type FileMetaData } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import type { OpenedDatasetFile } from "../dataset-place.js";
import type { RecordSource, SourceRow } from "./record-source.js";

/** The file as hyparquet reads it: byte ranges on demand, never the whole file. */
function fileBuffer({ handle, size }: OpenedDatasetFile): AsyncBuffer {
  return {
    byteLength: size,
    async slice(start: number, end?: number): Promise<ArrayBuffer> {
      const stop = Math.min(end ?? size, size);
      const bytes = new Uint8Array(Math.max(0, stop - start));
      await handle.read(bytes, 0, bytes.length, start);
      return bytes.buffer;
    },
  };
}

export async function openParquetSource(file: OpenedDatasetFile): Promise<RecordSource> {
  const buffer = fileBuffer(file);
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(buffer);
  } catch (error) {
    await file.handle.close();
    throw new Error(`not a parquet file: ${(error as Error).message}`);
  }
  return new ParquetSource(file, buffer, metadata);
}

class ParquetSource implements RecordSource {
  readonly kind: string;
  readonly rows: number;
  readonly bytes: number;
  /** The last row groups read, decoded: a shuffled run reads single rows, and a row group is the unit parquet decodes. */
  private readonly groups = new Map<number, Record<string, unknown>[]>();
  private readonly groupStarts: number[] = [];
  constructor(
    private readonly file: OpenedDatasetFile,
    private readonly buffer: AsyncBuffer,
    private readonly metadata: FileMetaData,
  ) {
    this.rows = Number(metadata.num_rows);
    this.bytes = file.size;
    let first = 0;
    for (const group of metadata.row_groups) {
      this.groupStarts.push(first);
      first += Number(group.num_rows);
    }
    this.kind = `parquet (${metadata.row_groups.length} row group${metadata.row_groups.length === 1 ? "" : "s"})`;
  }

  async read(start: number, end: number): Promise<SourceRow[]> {
    end = Math.min(end, this.rows);
    if (start >= end) return [];
    const out: SourceRow[] = [];
    for (let g = this.groupOf(start); g < this.groupStarts.length && this.groupStarts[g]! < end; g++) {
      const first = this.groupStarts[g]!;
      const rows = await this.group(g);
      for (let r = Math.max(start, first); r < Math.min(end, first + rows.length); r++)
        out.push({ index: r, where: `row ${r + 1}`, record: rows[r - first]! });
    }
    return out;
  }

  private groupOf(row: number): number {
    let g = 0;
    while (g + 1 < this.groupStarts.length && this.groupStarts[g + 1]! <= row) g++;
    return g;
  }

  private async group(index: number): Promise<Record<string, unknown>[]> {
    const cached = this.groups.get(index);
    if (cached) return cached;
    const first = this.groupStarts[index]!;
    const objects = await parquetReadObjects({
      file: this.buffer,
      metadata: this.metadata,
      rowStart: first,
      rowEnd: first + Number(this.metadata.row_groups[index]!.num_rows),
      compressors,
    });
    const rows = objects.map(plainRecord);
    // Two row groups at most: memory stays bounded whatever the file's size.
    if (this.groups.size >= 2) this.groups.delete(this.groups.keys().next().value!);
    this.groups.set(index, rows);
    return rows;
  }

  close(): Promise<void> {
    return this.file.handle.close();
  }
}

/** Columns as JSON would hold them: 64-bit integers as numbers where they fit. */
export function plainRecord(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) out[key] = plainValue(value);
  return out;
}

function plainValue(value: unknown): unknown {
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Array.isArray(value)) return value.map(plainValue);
  return value;
}
