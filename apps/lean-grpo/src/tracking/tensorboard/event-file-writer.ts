// One TensorBoard event file (events.out.tfevents.<time>.<host>.<pid>), written through a
// stream so that a step never waits on the disk; `tensorboard --logdir` reads it as it grows.
// The file is opened by the caller under runs_dir (kit/paths): nothing planted there is
// written through.
import { createWriteStream, type WriteStream } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { hostname } from "node:os";
import { encodeEvent, type SummaryValue } from "./event-proto.js";
import { tfRecord } from "./tfrecord.js";

export class EventFileWriter {
  private readonly stream: WriteStream;
  private failure: Error | undefined;

  /** The name TensorBoard looks for, for a file started now. */
  static fileName(): string {
    return `events.out.tfevents.${Math.floor(Date.now() / 1000)}.${hostname()}.${process.pid}`;
  }

  /** `handle`: the event file (`file`, named by fileName()), opened for appending; closed with the writer. */
  constructor(
    handle: FileHandle,
    readonly file: string,
    onError: (error: Error) => void,
  ) {
    this.stream = createWriteStream("", { fd: handle });
    this.stream.on("error", (error) => {
      this.failure ??= error;
      onError(error);
    });
    this.write(0, undefined, "brain.Event:2");
  }

  /** Summary values at a step; wall time now. */
  add(step: number, values: readonly SummaryValue[]): void {
    if (values.length > 0) this.write(step, values);
  }

  private write(step: number, values?: readonly SummaryValue[], fileVersion?: string): void {
    if (this.failure) return;
    const event = encodeEvent({
      wallTime: Date.now() / 1000,
      step,
      ...(values ? { values } : {}),
      ...(fileVersion ? { fileVersion } : {}),
    });
    this.stream.write(tfRecord(event));
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.stream.closed || this.stream.destroyed) resolve();
      else this.stream.end(() => resolve());
    });
  }
}
