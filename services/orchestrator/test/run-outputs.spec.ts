// runs/<id>/ files: a resumed run redoes the steps after its checkpoint, so their metrics
// and held-out evaluation lines go; the report draws the held-out curve from eval.jsonl.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RunOutputs, type StepRecord } from "../src/run/run-outputs.js";

const step = (n: number): StepRecord => ({
  step: n,
  time: "2026-11-22T00:00:00Z",
  adapter_version: n,
  metrics: { reward_mean: n / 10 },
  timings: { total_s: 1 },
});
const evaluation = (n: number) => ({ step: n, heldout_accuracy: n / 10, solved: n, problems: 10, seconds: 1 });

describe("RunOutputs", () => {
  let dir = "";
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("keeps the steps and evaluations up to the checkpoint on resume, and reports both", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "run-outputs-"));
    const outputs = new RunOutputs(dir);
    expect(await outputs.readSteps()).toEqual([]);
    expect(await outputs.readEvals()).toEqual([]);
    for (const n of [1, 2, 3, 4]) await outputs.appendStep(step(n));
    for (const n of [0, 2, 4]) await outputs.appendEval(evaluation(n));
    await outputs.truncateStepsAfter(2);
    expect((await outputs.readSteps()).map((s) => s.step)).toEqual([1, 2]);
    expect((await outputs.readEvals()).map((e) => e.step)).toEqual([0, 2]);
    const report = await readFile(await outputs.writeReport("run"), "utf8");
    expect(report).toContain("held-out greedy accuracy");
    expect(report).toContain("step 2: 20.0% (2/10)");
  });

  it("writes no eval.jsonl for a run without evaluations", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "run-outputs-"));
    const outputs = new RunOutputs(dir);
    await outputs.appendStep(step(1));
    await outputs.truncateStepsAfter(0);
    expect(await outputs.readSteps()).toEqual([]);
    expect(await readFile(path.join(dir, "eval.jsonl"), "utf8").catch(() => "absent")).toBe("absent");
    expect(await readFile(await outputs.writeReport("run"), "utf8")).not.toContain("held-out");
  });
});
