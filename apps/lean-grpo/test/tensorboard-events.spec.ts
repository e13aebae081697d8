// TensorBoard event files as the tracker writes them, read back by TensorBoard's own reader
// (the tensorboard Python package): every step's scalars, the held-out evaluations, the
// config and the kept completions as text. The framing's CRC is checked against its published value.
import { describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { maskedCrc32c } from "../src/tracking/tensorboard/tfrecord.js";
import { TensorBoardTracker } from "../src/tracking/tensorboard/tensorboard-tracker.js";
import { missingPythonModule, runReader } from "./tracking/python-reader.js";

const missing = missingPythonModule("tensorboard");

describe("TensorBoard event files", () => {
  it("frames records with TensorFlow's masked crc32c", () => {
    // crc32c("123456789") = 0xE3069283 (RFC 3720's check value); masked as TensorFlow's Mask().
    const crc = 0xe3069283;
    expect(maskedCrc32c(Buffer.from("123456789"))).toBe(((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0);
  });

  it.skipIf(missing !== undefined)(`are read by TensorBoard's own reader${missing ? ` (skipped: ${missing})` : ""}`, async () => {
    const runDir = await mkdtemp(path.join(tmpdir(), "tb-"));
    try {
      const tracker = new TensorBoardTracker();
      await tracker.start({ runId: "r1", runDir, name: "r1", config: { "training.steps": 2, "algorithm.name": "grpo" } });
      await tracker.evaluation({ step: 0, heldout_accuracy: 0.25, solved: 1, problems: 4, seconds: 0.5 });
      for (const step of [1, 2]) {
        await tracker.step({
          step,
          metrics: { "reward/mean": 0.1 * step, loss: -0.5 * step },
          timings: { total_s: 1.5 },
          samples: [{ theoremId: "p1", prompt: "1+1", completion: "\\boxed{2}", reward: 1, solved: true }],
        });
      }
      await tracker.evaluation({ step: 2, heldout_accuracy: 0.75, solved: 3, problems: 4, seconds: 0.5 });
      await tracker.finish();
      const read = runReader("read_tfevents.py", path.join(runDir, "tensorboard")) as {
        scalars: Record<string, [number, number][]>;
        texts: Record<string, [number, string][]>;
      };
      expect(read.scalars["train/reward/mean"]!.map(([s, v]) => [s, Number(v.toFixed(6))])).toEqual([
        [1, 0.1],
        [2, 0.2],
      ]);
      expect(read.scalars["train/loss"]).toEqual([
        [1, -0.5],
        [2, -1],
      ]);
      expect(read.scalars["time/total_s"]).toEqual([
        [1, 1.5],
        [2, 1.5],
      ]);
      expect(read.scalars["eval/heldout_accuracy"]).toEqual([
        [0, 0.25],
        [2, 0.75],
      ]);
      expect(read.texts.config![0]![1]).toContain('| algorithm.name | "grpo" |');
      expect(read.texts.samples!.map(([s]) => s)).toEqual([1, 2]);
      expect(read.texts.samples![0]![1]).toMatch(/\*\*p1\*\* reward 1 \(solved\)[\s\S]*\\boxed\{2\}/);
    } finally {
      await rm(runDir, { recursive: true, force: true });
    }
  });
});
