// logging.mode=offline: the W&B run directory (offline-run-<time>-<id>/run-<id>.wandb) that
// `wandb sync` uploads, read back with an independent reader of W&B's framing and W&B's own
// protobuf schema (the wandb Python package): the run with its config, a history row per
// step and per held-out evaluation, the summary and the exit code, in W&B's record order.
// A record larger than a 32 KiB block is split into FIRST/MIDDLE/LAST chunks and read whole.
import { describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { WandbTracker } from "../src/tracking/wandb/wandb-tracker.js";
import { resolveTracking, TrackingSchema } from "../src/tracking/tracking-config.js";
import { missingPythonModule, runReader } from "./tracking/python-reader.js";

const missing = missingPythonModule("wandb", "import importlib.util, sys; sys.exit(importlib.util.find_spec('wandb') is None)");

interface ReadRecord {
  num: number;
  kind: string;
  step?: number;
  items?: Record<string, unknown>;
  config?: Record<string, unknown>;
  run_id?: string;
  project?: string;
  entity?: string;
  display_name?: string;
  exit_code?: number;
}

describe("W&B offline runs", () => {
  it.skipIf(missing !== undefined)(`are W&B transaction logs${missing ? ` (skipped: ${missing})` : ""}`, async () => {
    const runDir = await mkdtemp(path.join(tmpdir(), "wandb-offline-"));
    try {
      const config = resolveTracking(TrackingSchema.parse({ mode: "offline", project: "rlvr-vocab", entity: "team" }), true);
      const tracker = new WandbTracker(config, {});
      await tracker.start({
        runId: "test_run-20260101-000000-abcd",
        runDir,
        name: "test_run",
        config: { "training.steps": 2, "algorithm.name": "grpo" },
      });
      await tracker.evaluation({ step: 0, heldout_accuracy: 0.25, solved: 1, problems: 4, seconds: 1 });
      // A completion longer than a block: its record spans chunks.
      const long = "x".repeat(70_000);
      for (const step of [1, 2]) {
        await tracker.step({
          step,
          metrics: { "reward/mean": 0.5 * step },
          timings: { total_s: 2 },
          samples: [{ theoremId: "p1", prompt: "1+1", completion: step === 1 ? long : "\\boxed{2}", reward: 1, solved: true }],
        });
      }
      await tracker.evaluation({ step: 2, heldout_accuracy: 0.75, solved: 3, problems: 4, seconds: 1 });
      await tracker.finish(false);
      const wandbDir = path.join(runDir, "wandb");
      const [offline] = readdirSync(wandbDir);
      expect(offline).toMatch(/^offline-run-\d{8}_\d{6}-test_run-20260101-000000-abcd$/);
      const records = runReader(
        "read_wandb_log.py",
        path.join(wandbDir, offline!, "run-test_run-20260101-000000-abcd.wandb"),
      ) as ReadRecord[];
      expect(records.map((r) => r.kind)).toEqual(["header", "run", "history", "history", "history", "summary", "exit", "final"]);
      expect(records.map((r) => r.num)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(records[1]).toMatchObject({
        run_id: "test_run-20260101-000000-abcd",
        project: "rlvr-vocab",
        entity: "team",
        display_name: "test_run",
        config: { "training.steps": 2, "algorithm.name": "grpo" },
      });
      expect(records[2]).toMatchObject({ step: 0, items: { "eval/heldout_accuracy": 0.25, _step: 0 } });
      expect(records[3]).toMatchObject({ step: 1, items: { "train/reward/mean": 0.5, "time/total_s": 2, _step: 1 } });
      expect(String(records[3]!.items!["samples/text"])).toContain(long);
      // The evaluation after step 2 joins step 2's row: one row per step, as W&B's history is.
      expect(records[4]).toMatchObject({ step: 2, items: { "train/reward/mean": 1, "eval/heldout_accuracy": 0.75, _step: 2 } });
      expect(records[5]!.items).toMatchObject({ "train/reward/mean": 1, "eval/heldout_accuracy": 0.75 });
      expect(records[6]).toMatchObject({ exit_code: 0 });
    } finally {
      await rm(runDir, { recursive: true, force: true });
    }
  });
});
