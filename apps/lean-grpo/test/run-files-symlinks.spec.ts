// What `lean-grpo train` writes into a run's folder itself (its service logs, TensorBoard's
// event file, W&B's offline run) goes through runs_dir without following a symlink: a run
// folder or a subfolder planted as a link to a directory elsewhere is refused, naming it, and
// nothing lands where it points.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configureLogDestination, logDestination, PathError } from "@lean-grpo/kit";
import { startRunLogs } from "../src/commands/run-logs.js";
import { TensorBoardTracker } from "../src/tracking/tensorboard/tensorboard-tracker.js";
import { resolveTracking, TrackingSchema } from "../src/tracking/tracking-config.js";
import { WandbTracker } from "../src/tracking/wandb/wandb-tracker.js";

let base: string;
let runs: string;
let outside: string;

beforeEach(() => {
  base = mkdtempSync(path.join(tmpdir(), "run-files-"));
  runs = path.join(base, "runs");
  outside = path.join(base, "outside");
  mkdirSync(runs);
  mkdirSync(outside);
});
afterEach(() => {
  expect(readdirSync(outside)).toEqual([]);
  rmSync(base, { recursive: true, force: true });
});

const run = (id: string) => ({ runId: id, runDir: path.join(runs, id), name: id, config: { "training.steps": 1 } });

describe("a run's own files under runs_dir", () => {
  it("startRunLogs refuses a run folder or logs/ that is a symlink, before any line is written", () => {
    const before = logDestination();
    try {
      symlinkSync(outside, path.join(runs, "linked"));
      expect(() => startRunLogs(runs, "linked", { verbose: false })).toThrow(
        new PathError('run id "linked" is a symlink; symlinks inside runs_dir are refused', "run id", "invalid"),
      );
      mkdirSync(path.join(runs, "r2"));
      symlinkSync(outside, path.join(runs, "r2", "logs"));
      expect(() => startRunLogs(runs, "r2", { verbose: false })).toThrow(
        'run id "r2/logs" is a symlink; symlinks inside runs_dir are refused',
      );
      expect(startRunLogs(runs, "r3", { verbose: false }).dir).toBe(path.join(runs, "r3", "logs"));
    } finally {
      configureLogDestination(before);
    }
  });

  it("TensorBoard's event file is not written into a tensorboard/ that is a symlink", async () => {
    mkdirSync(path.join(runs, "r1"));
    symlinkSync(outside, path.join(runs, "r1", "tensorboard"));
    await expect(new TensorBoardTracker().start(run("r1"))).rejects.toThrow(
      'run_id "r1/tensorboard" is a symlink; symlinks inside runs_dir are refused',
    );
  });

  it("W&B's offline run is not written into a wandb/ that is a symlink", async () => {
    mkdirSync(path.join(runs, "r1"));
    symlinkSync(outside, path.join(runs, "r1", "wandb"));
    const tracker = new WandbTracker(resolveTracking(TrackingSchema.parse({ mode: "offline", project: "p" }), true), {});
    await expect(tracker.start(run("r1"))).rejects.toThrow('run_id "r1/wandb" is a symlink; symlinks inside runs_dir are refused');
  });
});
