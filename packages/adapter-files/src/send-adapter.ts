// Sending an adapter: a header listing each file's path, size and SHA-256, then each
// file in chunks of at most `chunkSize` bytes (an empty file is one empty eof chunk).
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { FileChunkSchema, FileInfoSchema, type FileChunk, type FileInfo } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { AdapterEnvelope } from "./adapter-envelope.js";
import { safeRelativePath } from "./adapter-file-path.js";

export const DEFAULT_CHUNK_SIZE = 1 << 20;

export interface AdapterFile {
  /** Relative to the adapter directory, e.g. "adapter_model.safetensors". */
  path: string;
  data: Uint8Array;
}

/** The header, then every file's chunks, in the order of `files`. */
export function* adapterMessages<Message, HeaderFields>(
  envelope: AdapterEnvelope<Message, HeaderFields>,
  header: HeaderFields,
  files: readonly AdapterFile[],
  chunkSize = DEFAULT_CHUNK_SIZE,
): Generator<Message> {
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) throw new RangeError(`chunk size ${chunkSize} is not a positive integer`);
  yield envelope.header(header, files.map(describeFile));
  for (const file of files) {
    for (const chunk of fileChunks(file, chunkSize)) yield envelope.chunk(chunk);
  }
}

function describeFile(file: AdapterFile): FileInfo {
  return create(FileInfoSchema, {
    path: safeRelativePath(file.path),
    size: BigInt(file.data.byteLength),
    sha256: createHash("sha256").update(file.data).digest("hex"),
  });
}

function* fileChunks(file: AdapterFile, chunkSize: number): Generator<FileChunk> {
  const path = safeRelativePath(file.path);
  const size = file.data.byteLength;
  let offset = 0;
  do {
    const end = Math.min(size, offset + chunkSize);
    yield create(FileChunkSchema, { path, offset: BigInt(offset), data: file.data.subarray(offset, end), eof: end === size });
    offset = end;
  } while (offset < size);
}
