// Reads safetensors files: an 8-byte little-endian header length N, N bytes of JSON
// ({name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {...}}), then the
// raw little-endian row-major data. The header is checked as strictly as the reference
// parser does (offsets must tile the data section exactly), so a truncated or corrupt
// file fails on open with a message naming the file and what is wrong, not later with
// garbage numbers. Tensors are read one at a time, so peak memory is one tensor.
import { open, type FileHandle } from "node:fs/promises";
import { endianness } from "node:os";
import { SafetensorsFormatError } from "../errors.js";
import { bfloat16ToFloat32, float16ToFloat32 } from "./float-conversion.js";

/** Bytes per element of every safetensors dtype (the learner converts only the float ones). */
const DTYPE_SIZES: Record<string, number> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
};

/** Dtypes that convert to float32 without loss. */
export const FLOAT_DTYPES = ["F32", "BF16", "F16"] as const;

const MAX_HEADER_BYTES = 100_000_000; // the reference parser's cap

export interface SafetensorsTensorInfo {
  name: string;
  dtype: string;
  shape: number[];
  /** Byte range in the data section, end exclusive. */
  begin: number;
  end: number;
}

/** Where the bytes come from: a file (read on demand) or a buffer already in memory. */
interface ByteSource {
  readonly size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

function bufferSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.byteLength,
    read: async (offset, length) => bytes.subarray(offset, offset + length),
    close: async () => {},
  };
}

async function fileSource(path: string, handle: FileHandle): Promise<ByteSource> {
  const { size } = await handle.stat();
  return {
    size,
    async read(offset, length) {
      const out = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(out, done, length - done, offset + done);
        if (bytesRead === 0) throw new SafetensorsFormatError(`${path}: file ended while reading (was it changed?)`);
        done += bytesRead;
      }
      return out;
    },
    close: () => handle.close(),
  };
}

export class SafetensorsFile {
  private constructor(
    /** A name for messages: the path, or what the bytes are. */
    readonly source: string,
    readonly tensors: ReadonlyMap<string, SafetensorsTensorInfo>,
    readonly metadata: Readonly<Record<string, string>>,
    private readonly bytes: ByteSource,
    private readonly dataStart: number,
  ) {}

  /** Opens a file and validates its header; call close() when done. */
  static async open(path: string): Promise<SafetensorsFile> {
    return SafetensorsFile.fromHandle(await open(path, "r"), path);
  }

  /**
   * Reads a file already open (one opened under a root without following symlinks); `name`
   * names it in messages. Takes the handle over: close() closes it, and so does a failure here.
   */
  static async fromHandle(handle: FileHandle, name: string): Promise<SafetensorsFile> {
    try {
      return await SafetensorsFile.fromSource(await fileSource(name, handle), name);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Parses safetensors bytes already in memory (e.g. an adapter streamed over gRPC). */
  static async fromBytes(bytes: Uint8Array, name: string): Promise<SafetensorsFile> {
    return SafetensorsFile.fromSource(bufferSource(bytes), name);
  }

  private static async fromSource(bytes: ByteSource, name: string): Promise<SafetensorsFile> {
    if (endianness() !== "LE") {
      throw new SafetensorsFormatError("reading safetensors needs a little-endian machine");
    }
    if (bytes.size < 8) {
      throw new SafetensorsFormatError(
        `${name}: ${bytes.size} bytes is too short for a safetensors file (needs an 8-byte header length first)`,
      );
    }
    const lengthBytes = await bytes.read(0, 8);
    const headerLength = Number(new DataView(lengthBytes.buffer, lengthBytes.byteOffset, 8).getBigUint64(0, true));
    if (headerLength > MAX_HEADER_BYTES) {
      throw new SafetensorsFormatError(
        `${name}: header length ${headerLength} exceeds the ${MAX_HEADER_BYTES}-byte limit (not a safetensors file?)`,
      );
    }
    if (8 + headerLength > bytes.size) {
      throw new SafetensorsFormatError(
        `${name}: header says ${headerLength} bytes but the file has only ${bytes.size - 8} after the length (file truncated?)`,
      );
    }
    const headerBytes = await bytes.read(8, headerLength);
    let header: unknown;
    try {
      header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(headerBytes));
    } catch (error) {
      // Not the parser's message: V8 quotes the text it failed on, and a file is not the client's to read.
      const position = /at position (\d+)/.exec((error as Error).message);
      throw new SafetensorsFormatError(
        `${name}: header is not valid UTF-8 JSON${position ? ` (at character ${Number(position[1]) + 1})` : ""}`,
      );
    }
    if (typeof header !== "object" || header === null || Array.isArray(header)) {
      throw new SafetensorsFormatError(`${name}: header must be a JSON object of tensor entries`);
    }
    const dataSize = bytes.size - 8 - headerLength;
    const { tensors, metadata } = parseEntries(header as Record<string, unknown>, dataSize, name);
    return new SafetensorsFile(name, tensors, metadata, bytes, 8 + headerLength);
  }

  /** The tensor's raw bytes (little-endian, row-major). */
  async rawBytes(name: string): Promise<Uint8Array> {
    const info = this.info(name);
    return this.bytes.read(this.dataStart + info.begin, info.end - info.begin);
  }

  /** The tensor widened to float32; F32, BF16 and F16 are accepted, anything else is refused. */
  async float32(name: string): Promise<Float32Array> {
    const info = this.info(name);
    if (!(FLOAT_DTYPES as readonly string[]).includes(info.dtype)) {
      throw new SafetensorsFormatError(`${this.source}: tensor "${name}" has dtype ${info.dtype}; accepted: ${FLOAT_DTYPES.join(", ")}`);
    }
    // Copy into a fresh buffer: typed-array views need an aligned offset. Not .slice(): on a
    // Node Buffer (bytes streamed over gRPC) it is a view into a shared pool, not a copy.
    const raw = new Uint8Array(await this.rawBytes(name));
    if (info.dtype === "F32") return new Float32Array(raw.buffer, 0, raw.byteLength / 4);
    const halves = new Uint16Array(raw.buffer, 0, raw.byteLength / 2);
    return info.dtype === "BF16" ? bfloat16ToFloat32(halves) : float16ToFloat32(halves);
  }

  info(name: string): SafetensorsTensorInfo {
    const info = this.tensors.get(name);
    if (!info) throw new SafetensorsFormatError(`${this.source}: no tensor named "${name}"`);
    return info;
  }

  async close(): Promise<void> {
    await this.bytes.close();
  }
}

function parseEntries(header: Record<string, unknown>, dataSize: number, source: string) {
  const tensors = new Map<string, SafetensorsTensorInfo>();
  let metadata: Record<string, string> = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__") {
      metadata = parseMetadata(entry, source);
      continue;
    }
    tensors.set(name, parseEntry(name, entry, source));
  }
  // The entries must tile the data section exactly: no gaps, no overlaps, nothing after.
  const ordered = [...tensors.values()].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let expected = 0;
  for (const info of ordered) {
    if (info.begin !== expected) {
      throw new SafetensorsFormatError(
        `${source}: tensor "${info.name}" starts at byte ${info.begin} of the data section, expected ${expected} (overlapping or gapped offsets: corrupt header)`,
      );
    }
    expected = info.end;
  }
  if (expected > dataSize) {
    const last = ordered[ordered.length - 1]!;
    throw new SafetensorsFormatError(
      `${source}: tensor "${last.name}" ends at byte ${expected} of the data section but the file holds only ${dataSize} data bytes (file truncated?)`,
    );
  }
  if (expected < dataSize) {
    throw new SafetensorsFormatError(
      `${source}: ${dataSize - expected} bytes after the last tensor are not described by the header (corrupt file?)`,
    );
  }
  return { tensors, metadata };
}

function parseEntry(name: string, entry: unknown, source: string): SafetensorsTensorInfo {
  const fail = (what: string) => new SafetensorsFormatError(`${source}: tensor "${name}": ${what}`);
  if (typeof entry !== "object" || entry === null) throw fail("entry must be an object with dtype, shape, data_offsets");
  const { dtype, shape, data_offsets: offsets } = entry as Record<string, unknown>;
  if (typeof dtype !== "string" || !(dtype in DTYPE_SIZES)) {
    throw fail(`unknown dtype ${JSON.stringify(dtype)}; safetensors dtypes are ${Object.keys(DTYPE_SIZES).join(", ")}`);
  }
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw fail(`shape ${JSON.stringify(shape)} must be a list of non-negative integers`);
  }
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) ||
    offsets[1] < offsets[0]
  ) {
    throw fail(`data_offsets ${JSON.stringify(offsets)} must be [begin, end] with 0 <= begin <= end`);
  }
  const [begin, end] = offsets as [number, number];
  const elements = (shape as number[]).reduce((a, b) => a * b, 1);
  if (end - begin !== elements * DTYPE_SIZES[dtype]!) {
    throw fail(`data_offsets span ${end - begin} bytes but ${dtype} shape [${shape.join(", ")}] needs ${elements * DTYPE_SIZES[dtype]!}`);
  }
  return { name, dtype, shape: shape as number[], begin, end };
}

function parseMetadata(entry: unknown, source: string): Record<string, string> {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry) || !Object.values(entry).every((v) => typeof v === "string")) {
    throw new SafetensorsFormatError(`${source}: "__metadata__" must be an object of string values`);
  }
  return entry as Record<string, string>;
}
