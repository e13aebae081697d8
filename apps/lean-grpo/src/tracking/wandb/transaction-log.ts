// A W&B offline run: the run directory (offline-run-<time>-<id>/run-<id>.wandb) that W&B's own
// `wandb sync DIR` uploads. The .wandb file is W&B's transaction log: a 7-byte header
// (":W&B", magic 0xBEE1, version 0) then the LevelDB log format (32 KiB blocks; each chunk
// is crc32 of its type byte and data | length | type FULL, FIRST, MIDDLE or LAST | data;
// a block's last < 7 bytes are zero padding), each record a protobuf wandb_internal.Record
// (W&B's wandb/proto/wandb_internal.proto; the framing is its sdk/internal/datastore.py).
import { writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { crc32 } from "node:zlib";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

const BLOCK = 32768;
const HEADER = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

/** Appends LevelDB-log chunks to a file (a new one, opened by the caller), the first 7 bytes being W&B's header. */
export class TransactionLog {
  private offset = 0;

  constructor(private readonly handle: FileHandle) {
    const header = Buffer.alloc(HEADER);
    header.write(":W&B", 0, "latin1");
    header.writeUInt16LE(0xbee1, 4);
    header.writeUInt8(0, 6);
    writeAll(handle.fd, header);
    this.offset = HEADER;
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  /** One record, split into chunks at block boundaries. */
  append(data: Uint8Array): void {
    const out: Buffer[] = [];
    let left = Buffer.from(data);
    let first = true;
    for (;;) {
      let space = BLOCK - (this.offset % BLOCK);
      if (space < HEADER) {
        out.push(Buffer.alloc(space));
        this.offset += space;
        space = BLOCK;
      }
      const room = space - HEADER;
      const fits = left.length <= room;
      const type = fits ? (first ? FULL : LAST) : first ? FIRST : MIDDLE;
      const chunk = fits ? left : left.subarray(0, room);
      const head = Buffer.alloc(HEADER);
      head.writeUInt32LE(crc32(chunk, crc32(Buffer.from([type]))) >>> 0, 0);
      head.writeUInt16LE(chunk.length, 4);
      head.writeUInt8(type, 6);
      out.push(head, chunk);
      this.offset += HEADER + chunk.length;
      if (fits) break;
      left = left.subarray(room);
      first = false;
    }
    writeAll(this.handle.fd, Buffer.concat(out));
  }
}

/** Synchronous, so that the records of a run that ends abruptly are on disk in order. */
function writeAll(fd: number, data: Buffer): void {
  for (let done = 0; done < data.length; ) done += writeSync(fd, data, done);
}

/** A key and its JSON value: HistoryItem, ConfigItem and SummaryItem share the shape (key = 1, value_json = 16). */
function item(key: string, value: unknown): Uint8Array {
  return new BinaryWriter()
    .tag(1, WireType.LengthDelimited)
    .string(key)
    .tag(16, WireType.LengthDelimited)
    .string(JSON.stringify(value))
    .finish();
}

function items(field: number, values: Record<string, unknown>): BinaryWriter {
  const w = new BinaryWriter();
  for (const [key, value] of Object.entries(values)) w.tag(field, WireType.LengthDelimited).bytes(item(key, value));
  return w;
}

/** Record { num = 1, <kind> = field }. */
function record(num: number, field: number, body: Uint8Array): Uint8Array {
  return new BinaryWriter().tag(1, WireType.Varint).int64(num).tag(field, WireType.LengthDelimited).bytes(body).finish();
}

export interface OfflineRunStart {
  runId: string;
  project: string;
  entity?: string;
  displayName: string;
  config: Record<string, unknown>;
  startTime: Date;
}

/** The records of one W&B run, in the order W&B's SDK writes them: header, run, history…, summary, exit, final. */
export class OfflineRun {
  private num = 0;

  /**
   * `createFile` makes a new file at a path relative to the W&B directory (the run's wandb/,
   * opened under runs_dir so that nothing planted there is written through).
   */
  static async create(createFile: (relative: string) => Promise<FileHandle>, start: OfflineRunStart): Promise<OfflineRun> {
    const t = start.startTime.toISOString();
    const stamp = `${t.slice(0, 10).replaceAll("-", "")}_${t.slice(11, 19).replaceAll(":", "")}`;
    const dir = `offline-run-${stamp}-${start.runId}`;
    return new OfflineRun(dir, new TransactionLog(await createFile(path.posix.join(dir, `run-${start.runId}.wandb`))), start);
  }

  private constructor(
    /** Its directory, relative to the W&B directory. */
    readonly dir: string,
    private readonly log: TransactionLog,
    start: OfflineRunStart,
  ) {
    this.write(21, new Uint8Array(0)); // HeaderRecord
    const run = new BinaryWriter()
      .tag(1, WireType.LengthDelimited)
      .string(start.runId)
      .tag(2, WireType.LengthDelimited)
      .string(start.entity ?? "")
      .tag(3, WireType.LengthDelimited)
      .string(start.project)
      .tag(4, WireType.LengthDelimited)
      .bytes(items(1, start.config).finish())
      .tag(8, WireType.LengthDelimited)
      .string(start.displayName)
      .tag(17, WireType.LengthDelimited)
      .bytes(timestamp(start.startTime))
      .finish();
    this.write(17, run); // RunRecord
  }

  /** HistoryRecord { item = 1, step = 2: HistoryStep { num = 1 } }; the row carries _step, as W&B's rows do. */
  history(step: number, row: Record<string, unknown>): void {
    const body = items(1, { ...row, _step: step });
    body.tag(2, WireType.LengthDelimited).bytes(new BinaryWriter().tag(1, WireType.Varint).int64(step).finish());
    this.write(2, body.finish());
  }

  /** SummaryRecord { update = 1 }. */
  summary(values: Record<string, unknown>): void {
    this.write(3, items(1, values).finish());
  }

  /** RunExitRecord { exit_code = 1, runtime = 2 }, then FinalRecord. */
  exit(code: number, runtimeSeconds: number): void {
    this.write(
      18,
      new BinaryWriter().tag(1, WireType.Varint).int32(code).tag(2, WireType.Varint).int32(Math.round(runtimeSeconds)).finish(),
    );
    this.write(20, new Uint8Array(0));
  }

  close(): Promise<void> {
    return this.log.close();
  }

  private write(field: number, body: Uint8Array): void {
    this.num += 1;
    this.log.append(record(this.num, field, body));
  }
}

/** google.protobuf.Timestamp { seconds = 1, nanos = 2 }. */
function timestamp(date: Date): Uint8Array {
  const ms = date.getTime();
  return new BinaryWriter()
    .tag(1, WireType.Varint)
    .int64(Math.floor(ms / 1000))
    .tag(2, WireType.Varint)
    .int32((ms % 1000) * 1_000_000)
    .finish();
}
