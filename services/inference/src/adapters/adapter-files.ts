// Writes an adapter's files as they stream in (LoadAdapter), refusing anything
// that could escape the adapter's directory or arrive damaged: paths must be
// relative and announced, chunks contiguous, sizes and SHA-256 digests must match.
import { createHash, type Hash } from "node:crypto";
import { mkdir, open, rm, type FileHandle } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import type { FileChunk, FileInfo } from "@lean-grpo/gen/leangrpo/v1/common_pb";

interface OpenFile {
  info: FileInfo;
  handle: FileHandle;
  written: bigint;
  hash: Hash;
}

export class AdapterFileWriter {
  private readonly expected = new Map<string, FileInfo>();
  private readonly done = new Set<string>();
  private current: OpenFile | undefined;

  private constructor(readonly dir: string) {}

  /** Prepares an empty directory for the announced files. */
  static async create(dir: string, files: FileInfo[]): Promise<AdapterFileWriter> {
    if (files.length === 0) {
      throw new ConnectError("source.files is empty: list the adapter's files (with size and sha256) or give source.path", Code.InvalidArgument);
    }
    const writer = new AdapterFileWriter(dir);
    for (const info of files) {
      writer.expected.set(safeRelativePath(info.path), info);
    }
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    return writer;
  }

  async write(chunk: FileChunk): Promise<void> {
    const path = safeRelativePath(chunk.path);
    const info = this.expected.get(path);
    if (!info) {
      throw new ConnectError(`chunk for "${chunk.path}", which source.files does not list (listed: ${[...this.expected.keys()].join(", ")})`, Code.InvalidArgument);
    }
    if (this.done.has(path)) throw new ConnectError(`"${path}" was already complete`, Code.InvalidArgument);
    if (this.current?.info.path !== info.path) {
      if (this.current) throw new ConnectError(`"${chunk.path}" started before "${this.current.info.path}" ended (eof)`, Code.InvalidArgument);
      const target = join(this.dir, path);
      await mkdir(dirname(target), { recursive: true });
      this.current = { info, handle: await open(target, "w"), written: 0n, hash: createHash("sha256") };
    }
    const file = this.current;
    if (chunk.offset !== file.written) {
      throw new ConnectError(`"${path}": chunk at offset ${chunk.offset}, expected ${file.written}`, Code.InvalidArgument);
    }
    if (file.written + BigInt(chunk.data.length) > file.info.size) {
      throw new ConnectError(`"${path}" is longer than its announced ${file.info.size} bytes`, Code.InvalidArgument);
    }
    await file.handle.write(chunk.data);
    file.hash.update(chunk.data);
    file.written += BigInt(chunk.data.length);
    if (chunk.eof) await this.finishFile(file);
  }

  /** Checks that every announced file arrived whole. */
  async finish(): Promise<void> {
    if (this.current) throw new ConnectError(`the stream ended inside "${this.current.info.path}" (no eof chunk)`, Code.InvalidArgument);
    const missing = [...this.expected.keys()].filter((p) => !this.done.has(p));
    if (missing.length > 0) throw new ConnectError(`files announced but not sent: ${missing.join(", ")}`, Code.InvalidArgument);
  }

  /** Removes what was written (after a failure). */
  async discard(): Promise<void> {
    await this.current?.handle.close().catch(() => {});
    this.current = undefined;
    await rm(this.dir, { recursive: true, force: true });
  }

  private async finishFile(file: OpenFile): Promise<void> {
    await file.handle.close();
    this.current = undefined;
    if (file.written !== file.info.size) {
      throw new ConnectError(`"${file.info.path}": ${file.written} bytes received, ${file.info.size} announced`, Code.InvalidArgument);
    }
    const digest = file.hash.digest("hex");
    if (file.info.sha256 && digest !== file.info.sha256.toLowerCase()) {
      throw new ConnectError(`"${file.info.path}": sha256 ${digest} does not match the announced ${file.info.sha256}`, Code.DataLoss);
    }
    this.done.add(safeRelativePath(file.info.path));
  }
}

/** A relative path that stays inside its directory. */
export function safeRelativePath(path: string): string {
  const normalized = normalize(path);
  if (path === "" || isAbsolute(path) || normalized.split(sep).includes("..") || normalized.startsWith("..")) {
    throw new ConnectError(`file path "${path}" must be relative and stay inside the adapter directory`, Code.InvalidArgument);
  }
  return normalized;
}

/** Adapter names become directory names and vLLM model names. */
export function checkAdapterName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) {
    throw new ConnectError(`adapter name "${name}" must be 1-128 of letters, digits, ".", "_", "-", starting with a letter or digit`, Code.InvalidArgument);
  }
  return name;
}
