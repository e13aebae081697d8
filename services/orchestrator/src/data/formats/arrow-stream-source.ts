// One Arrow IPC stream file (a `datasets` data-*.arrow shard) as rows, through apache-arrow.
// Opening walks the stream's message headers once, without reading bodies, and keeps where each
// record batch starts and how many rows it has; a range of rows then decodes only the batches
// it touches (the schema message, then the batch, as a small stream of its own).
import { Message, MessageHeader, tableFromIPC, Vector } from "apache-arrow";
import type { OpenedDatasetFile } from "../dataset-place.js";

interface BatchPlace {
  offset: number;
  byteLength: number;
  rows: number;
  /** Rows before it in this file. */
  first: number;
}

const END_OF_STREAM = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

export class ArrowStreamFile {
  private cached?: { batch: number; rows: Record<string, unknown>[] };

  private constructor(
    private readonly file: OpenedDatasetFile,
    /** The schema message (and any dictionary batches before the first record batch), verbatim. */
    private readonly prelude: Uint8Array,
    private readonly batches: BatchPlace[],
    readonly rows: number,
  ) {}

  static async open(file: OpenedDatasetFile, name: string): Promise<ArrowStreamFile> {
    try {
      return await ArrowStreamFile.scan(file, name);
    } catch (error) {
      await file.handle.close();
      throw error;
    }
  }

  private static async scan(file: OpenedDatasetFile, name: string): Promise<ArrowStreamFile> {
    const { handle, size } = file;
    const head = Buffer.alloc(8);
    const batches: BatchPlace[] = [];
    let preludeEnd = -1;
    let rows = 0;
    for (let offset = 0; offset + 4 <= size; ) {
      const { bytesRead } = await handle.read(head, 0, Math.min(8, size - offset), offset);
      let prefix = 4;
      let metadataLength = head.readInt32LE(0);
      if (metadataLength === -1) {
        if (bytesRead < 8) break;
        prefix = 8;
        metadataLength = head.readInt32LE(4);
      }
      if (metadataLength === 0) break; // end of stream
      if (metadataLength < 0 || offset + prefix + metadataLength > size)
        throw new Error(`${name} is not an Arrow IPC stream (bad message at byte ${offset})`);
      const metadata = Buffer.alloc(metadataLength);
      await handle.read(metadata, 0, metadataLength, offset + prefix);
      const message = Message.decode(metadata);
      const byteLength = prefix + metadataLength + Number(message.bodyLength);
      if (message.headerType === MessageHeader.RecordBatch) {
        if (preludeEnd < 0) preludeEnd = offset;
        const batchRows = Number((message as Message<MessageHeader.RecordBatch>).header().length);
        batches.push({ offset, byteLength, rows: batchRows, first: rows });
        rows += batchRows;
      } else if (message.headerType === MessageHeader.DictionaryBatch && preludeEnd >= 0) {
        throw new Error(
          `${name} has dictionary batches between record batches, which this reader does not follow; save the dataset without dictionary columns`,
        );
      }
      offset += byteLength;
    }
    if (preludeEnd < 0) preludeEnd = 0;
    const prelude = new Uint8Array(preludeEnd);
    await handle.read(prelude, 0, preludeEnd, 0);
    return new ArrowStreamFile(file, prelude, batches, rows);
  }

  /** Rows [start, end) of this file as plain objects. */
  async read(start: number, end: number): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (let b = this.batchOf(start); b < this.batches.length && this.batches[b]!.first < end; b++) {
      const batch = this.batches[b]!;
      const rows = await this.decode(b);
      out.push(...rows.slice(Math.max(0, start - batch.first), Math.min(batch.rows, end - batch.first)));
    }
    return out;
  }

  get bytes(): number {
    return this.file.size;
  }

  close(): Promise<void> {
    return this.file.handle.close();
  }

  private batchOf(row: number): number {
    let low = 0;
    let high = this.batches.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.batches[mid]!.first <= row) low = mid;
      else high = mid - 1;
    }
    return low;
  }

  private async decode(index: number): Promise<Record<string, unknown>[]> {
    if (this.cached?.batch === index) return this.cached.rows;
    const place = this.batches[index]!;
    const bytes = new Uint8Array(this.prelude.length + place.byteLength + END_OF_STREAM.length);
    bytes.set(this.prelude, 0);
    await this.file.handle.read(bytes, this.prelude.length, place.byteLength, place.offset);
    bytes.set(END_OF_STREAM, this.prelude.length + place.byteLength);
    const table = tableFromIPC(bytes);
    const names = table.schema.fields.map((field) => field.name);
    const columns = names.map((name) => table.getChild(name));
    const rows: Record<string, unknown>[] = [];
    for (let r = 0; r < table.numRows; r++) {
      const row: Record<string, unknown> = {};
      names.forEach((name, c) => {
        row[name] = plainArrowValue(columns[c]?.get(r));
      });
      rows.push(row);
    }
    this.cached = { batch: index, rows };
    return rows;
  }
}

/** A cell as JSON would hold it: lists as arrays, 64-bit integers as numbers where they fit, structs as objects. */
function plainArrowValue(value: unknown): unknown {
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Vector) return Array.from(value as Iterable<unknown>, plainArrowValue);
  if (value !== null && typeof value === "object" && "toJSON" in value && typeof value.toJSON === "function") {
    const json = value.toJSON() as Record<string, unknown>;
    return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, plainArrowValue(v)]));
  }
  return value;
}
