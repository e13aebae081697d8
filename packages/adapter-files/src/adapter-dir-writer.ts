// Receiving an adapter's files into a directory. The header announces every file (path,
// size, SHA-256); chunks must then come file after file, each from offset 0 without gaps,
// ending with eof at exactly the announced size and digest. Anything else throws an
// AdapterTransferError naming the file and what was expected. The files go into a directory
// made afresh under a root by the caller (the kit's RootDirectory.freshDirectory: each file
// created once, no symlink followed), and only once the header has been checked.
import { createHash, type Hash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import type { FileChunk, FileInfo } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { safeRelativePath } from "./adapter-file-path.js";
import { AdapterTransferError } from "./adapter-transfer-error.js";

export interface TransferLimits {
  /** Files one adapter may announce. */
  maxFiles: number;
  /** Bytes one adapter may announce, all files together. */
  maxTotalBytes: bigint;
}

// A PEFT adapter is two files; LoRA on every projection of a 70B model at rank 256 stays under a few GiB.
export const DEFAULT_TRANSFER_LIMITS: TransferLimits = { maxFiles: 64, maxTotalBytes: 16n << 30n };

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

/** A fresh, empty directory to receive into (what the kit's RootDirectory.freshDirectory gives). */
export interface AdapterDirectory {
  /** Where it is, for messages. */
  readonly path: string;
  /** A new file at `relative` (its directories made), for writing; nothing is replaced, no symlink followed. */
  createFile(relative: string): Promise<FileHandle>;
  /** Releases it; `keep` false removes it and everything written into it. */
  close(keep: boolean): Promise<void>;
}

interface OpenFile {
  path: string;
  info: FileInfo;
  handle: FileHandle;
  written: bigint;
  hash: Hash;
}

export class AdapterDirWriter {
  private readonly done = new Set<string>();
  private current: OpenFile | undefined;

  private closed = false;

  private constructor(
    private readonly directory: AdapterDirectory,
    private readonly expected: ReadonlyMap<string, FileInfo>,
  ) {}

  /** Where the files go, for messages. */
  get dir(): string {
    return this.directory.path;
  }

  /** Checks the announced files, then asks `directory` for the fresh directory they go into. */
  static async create(
    directory: () => Promise<AdapterDirectory>,
    files: readonly FileInfo[],
    limits: TransferLimits = DEFAULT_TRANSFER_LIMITS,
  ): Promise<AdapterDirWriter> {
    const expected = announcedFiles(files, limits);
    return new AdapterDirWriter(await directory(), expected);
  }

  async write(chunk: FileChunk): Promise<void> {
    const file = await this.fileFor(chunk);
    if (chunk.offset !== file.written) {
      throw new AdapterTransferError(`"${file.path}": chunk at offset ${chunk.offset}, expected offset ${file.written}`, "invalid");
    }
    if (file.written + BigInt(chunk.data.byteLength) > file.info.size) {
      throw new AdapterTransferError(
        `"${file.path}" is longer than its announced ${file.info.size} bytes (a chunk ends at ${file.written + BigInt(chunk.data.byteLength)})`,
        "invalid",
      );
    }
    await file.handle.write(chunk.data);
    file.hash.update(chunk.data);
    file.written += BigInt(chunk.data.byteLength);
    if (chunk.eof) await this.finishFile(file);
  }

  /** Checks that every announced file arrived whole, and keeps them. */
  async finish(): Promise<void> {
    if (this.current) {
      throw new AdapterTransferError(
        `the stream ended inside "${this.current.path}" (${this.current.written} of ${this.current.info.size} bytes, no eof chunk)`,
        "invalid",
      );
    }
    const missing = [...this.expected.keys()].filter((p) => !this.done.has(p));
    if (missing.length > 0)
      throw new AdapterTransferError(`files announced but not sent: ${missing.map((p) => `"${p}"`).join(", ")}`, "invalid");
    this.closed = true;
    await this.directory.close(true);
  }

  /** Removes the directory and everything written to it (after a failure). */
  async discard(): Promise<void> {
    await this.current?.handle.close().catch(() => {});
    this.current = undefined;
    if (this.closed) return;
    this.closed = true;
    await this.directory.close(false);
  }

  /** The open file a chunk continues, or the announced file it starts. */
  private async fileFor(chunk: FileChunk): Promise<OpenFile> {
    const relative = safeRelativePath(chunk.path);
    if (this.current?.path === relative) return this.current;
    const info = this.expected.get(relative);
    if (!info) {
      throw new AdapterTransferError(
        `chunk for "${chunk.path}", which the header does not list (listed: ${[...this.expected.keys()].map((p) => `"${p}"`).join(", ")})`,
        "invalid",
      );
    }
    if (this.done.has(relative)) throw new AdapterTransferError(`chunk for "${relative}", which was already complete (eof)`, "invalid");
    if (this.current) throw new AdapterTransferError(`"${relative}" started before "${this.current.path}" ended (eof)`, "invalid");
    this.current = { path: relative, info, handle: await this.directory.createFile(relative), written: 0n, hash: createHash("sha256") };
    return this.current;
  }

  private async finishFile(file: OpenFile): Promise<void> {
    this.current = undefined;
    await file.handle.close();
    if (file.written !== file.info.size) {
      throw new AdapterTransferError(`"${file.path}": ${file.written} bytes received, ${file.info.size} announced`, "invalid");
    }
    const digest = file.hash.digest("hex");
    if (digest !== file.info.sha256.toLowerCase()) {
      throw new AdapterTransferError(`"${file.path}": sha256 ${digest} does not match the announced ${file.info.sha256}`, "corrupt");
    }
    this.done.add(file.path);
  }
}

/** The announced files by normalised path, after checking paths, digests and limits. */
function announcedFiles(files: readonly FileInfo[], limits: TransferLimits): Map<string, FileInfo> {
  if (files.length === 0) throw new AdapterTransferError("the header lists no files: list each file with its size and sha256", "invalid");
  if (files.length > limits.maxFiles) {
    throw new AdapterTransferError(`the header lists ${files.length} files; an adapter may have at most ${limits.maxFiles}`, "too-large");
  }
  const expected = new Map<string, FileInfo>();
  let total = 0n;
  for (const info of files) {
    const relative = safeRelativePath(info.path);
    if (expected.has(relative)) throw new AdapterTransferError(`"${info.path}" is listed twice in the header`, "invalid");
    if (!SHA256_HEX.test(info.sha256)) {
      throw new AdapterTransferError(
        `"${info.path}": sha256 "${info.sha256}" is not 64 hex digits (the SHA-256 of the whole file)`,
        "invalid",
      );
    }
    expected.set(relative, info);
    total += info.size;
  }
  if (total > limits.maxTotalBytes) {
    throw new AdapterTransferError(`the header announces ${total} bytes; an adapter may have at most ${limits.maxTotalBytes}`, "too-large");
  }
  return expected;
}
