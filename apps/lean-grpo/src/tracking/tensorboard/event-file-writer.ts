// One TensorBoard event file (events.out.tfevents.<time>.<host>.<pid>), written through a
// stream so that a step never waits on the disk; `tensorboard --logdir` reads it as it grows.
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { encodeEvent, type SummaryValue } from "./event-proto.js";
import { tfRecord } from "./tfrecord.js";

export class EventFileWriter {
  readonly file: string;
  private readonly stream: WriteStream;
  private failure: Error | undefined;

  constructor(dir: string, onError: (error: Error) => void) {
    mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `events.out.tfevents.${Math.floor(Date.now() / 1000)}.${hostname()}.${process.pid}`);
    this.stream = createWriteStream(this.file, { flags: "a" });
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
