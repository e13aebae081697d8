// runs/<id>/ files: a resumed run redoes the steps after its checkpoint, so their metrics
// held-out evaluation and sample lines go; samples live apart from metrics.jsonl; the report
// renderer is handed the steps (with their samples), the evaluations and the final state.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { RunSchema, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RunOutputs, type StepRecord } from "../src/run/outputs/run-outputs.js";
import { writeRunReport, type RunReport } from "../src/run/outputs/run-report.js";
import type { SampleRecord } from "../src/run/training/step-samples.js";

const step = (n: number): StepRecord => ({
  step: n,
  time: "2026-11-22T00:00:00Z",
  adapter_version: n,
  metrics: { reward_mean: n / 10 },
  timings: { total_s: 1 },
  samples: [sample(n)],
});
function sample(n: number): SampleRecord {
  return {
    group_id: `s${n}-g0`,
    theorem_id: `t${n}`,
    prompt: "What is 2+2?",
    completion: `\\boxed{${n}}`,
    reward: n === 4 ? 1 : 0,
    reward_components: { math_answer: n === 4 ? 1 : 0 },
    solved: n === 4,
    verdict: "",
    messages: [],
    completion_tokens: 5,
    finish_reason: "STOP",
    truncated: false,
  };
}
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
    expect((await outputs.readSamples()).map((s) => [s.step, s.samples[0]!.completion])).toEqual([
      [1, "\\boxed{1}"],
      [2, "\\boxed{2}"],
    ]);
    // metrics.jsonl keeps no samples: it is read whole by every summary.
    expect(await readFile(path.join(dir, "metrics.jsonl"), "utf8")).not.toContain("boxed");

    let seen: RunReport | undefined;
    const run = create(RunSchema, { id: "r1", state: RunState.COMPLETED, step: 2n, outputDir: dir });
    await outputs.create({ run: { training: { steps: 2 } }, dataset: "d.jsonl" });
    const file = await writeRunReport(run, outputs, (report) => {
      seen = report;
      return "<!doctype html><title>r1</title>";
    });
    expect(await readFile(file, "utf8")).toBe("<!doctype html><title>r1</title>");
    expect(seen!.details.evaluations.map((e) => [Number(e.step), e.accuracy])).toEqual([
      [0, 0],
      [2, 0.2],
    ]);
    expect(seen!.details.config).toEqual({ run: { training: { steps: 2 } }, dataset: "d.jsonl" });
    expect(seen!.events.map((e) => e.event.case)).toEqual(["step", "step", "stateChange"]);
    const second = seen!.events[1]!.event;
    expect(second.case === "step" && second.value.samples.map((s) => s.completion)).toEqual(["\\boxed{2}"]);
  });

  it("writes no eval.jsonl for a run without evaluations", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "run-outputs-"));
    const outputs = new RunOutputs(dir);
    await outputs.appendStep(step(1));
    await outputs.truncateStepsAfter(0);
    expect(await outputs.readSteps()).toEqual([]);
    expect(await readFile(path.join(dir, "eval.jsonl"), "utf8").catch(() => "absent")).toBe("absent");
    expect(await outputs.readSamples()).toEqual([]);
  });
});
