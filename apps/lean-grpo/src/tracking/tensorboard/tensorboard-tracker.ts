// TensorBoard: scalars (train/<metric>, time/<timing>, eval/<measure>), the resolved config
// and each step's kept completions as text, in runs/<id>/tensorboard/. View with
// `tensorboard --logdir runs` (every run is a TensorBoard run of its own).
import path from "node:path";
import { RunOutputs, type EvalRecord } from "@lean-grpo/orchestrator";
import { samplesMarkdown, type Tracker, type TrackedRun, type TrackedStep } from "../tracker.js";
import { EventFileWriter } from "./event-file-writer.js";
import type { SummaryValue } from "./event-proto.js";

export class TensorBoardTracker implements Tracker {
  readonly label = "TensorBoard";
  private writer: EventFileWriter | undefined;
  private error: Error | undefined;

  async start(run: TrackedRun): Promise<void> {
    const file = path.posix.join("tensorboard", EventFileWriter.fileName());
    const handle = await new RunOutputs(run.runDir).open((dir) => dir.openAppend(file), true);
    this.writer = new EventFileWriter(handle, path.join(run.runDir, file), (error) => (this.error ??= error));
    const rows = Object.entries(run.config).map(([key, value]) => `| ${key} | ${JSON.stringify(value)} |`);
    this.writer.add(0, [{ tag: "config", text: `| key | value |\n|---|---|\n${rows.join("\n")}` }]);
    this.check();
  }

  async step(step: TrackedStep): Promise<void> {
    const values: SummaryValue[] = [
      ...scalars("train", step.metrics),
      ...scalars("time", step.timings),
      ...(step.samples.length > 0 ? [{ tag: "samples", text: samplesMarkdown(step.samples) }] : []),
    ];
    this.writer!.add(step.step, values);
    this.check();
  }

  async evaluation(record: EvalRecord): Promise<void> {
    this.writer!.add(record.step, [
      { tag: "eval/heldout_accuracy", scalar: record.heldout_accuracy },
      { tag: "eval/solved", scalar: record.solved },
      { tag: "eval/seconds", scalar: record.seconds },
    ]);
    this.check();
  }

  async finish(): Promise<void> {
    await this.writer?.close();
    this.check();
  }

  /** A write that failed (disk full, folder gone) fails the tracker at its next operation. */
  private check(): void {
    if (this.error) throw new Error(`cannot write ${this.writer?.file}: ${this.error.message}`);
  }
}

function scalars(prefix: string, values: Record<string, number>): SummaryValue[] {
  return Object.entries(values)
    .filter(([, v]) => Number.isFinite(v))
    .map(([key, v]) => ({ tag: `${prefix}/${key}`, scalar: v }));
}
