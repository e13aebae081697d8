// Writes an adapter's files as they stream in (LoadAdapter) through the shared transfer
// module, which checks paths, order, sizes and digests; its errors become status codes here.
import { Code, ConnectError } from "@connectrpc/connect";
import { AdapterDirWriter, AdapterTransferError, type AdapterDirectory, type TransferProblem } from "@lean-grpo/adapter-files";
import type { FileChunk, FileInfo } from "@lean-grpo/gen/leangrpo/v1/common_pb";

const CODE_OF: Record<TransferProblem, Code> = {
  invalid: Code.InvalidArgument,
  corrupt: Code.DataLoss,
  "too-large": Code.ResourceExhausted,
};

export class AdapterFileWriter {
  private constructor(private readonly files: AdapterDirWriter) {}

  /** Checks the announced files, then takes the fresh directory `directory` makes for them. */
  static async create(directory: () => Promise<AdapterDirectory>, files: FileInfo[]): Promise<AdapterFileWriter> {
    if (files.length === 0) {
      throw new ConnectError(
        "source.files is empty: list the adapter's files (with size and sha256) or give source.path",
        Code.InvalidArgument,
      );
    }
    return new AdapterFileWriter(await withStatus(() => AdapterDirWriter.create(directory, files)));
  }

  write(chunk: FileChunk): Promise<void> {
    return withStatus(() => this.files.write(chunk));
  }

  get dir(): string {
    return this.files.dir;
  }

  /** Checks that every announced file arrived whole. */
  finish(): Promise<void> {
    return withStatus(() => this.files.finish());
  }

  /** Removes what was written (after a failure). */
  discard(): Promise<void> {
    return this.files.discard();
  }
}

async function withStatus<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof AdapterTransferError) throw new ConnectError(error.message, CODE_OF[error.problem]);
    throw error;
  }
}

/** Adapter names become directory names and vLLM model names. */
export function checkAdapterName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) {
    throw new ConnectError(
      `adapter name "${name}" must be 1-128 of letters, digits, ".", "_", "-", starting with a letter or digit`,
      Code.InvalidArgument,
    );
  }
  return name;
}
