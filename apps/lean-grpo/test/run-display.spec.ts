// What `lean-grpo train` prints: the progress bar's ETA and phase, and the summary of a run
// that ended (its width, its held-out line, and what to do next).
import { create } from "@bufbuild/protobuf";
import { RunSchema, RunState, StepTimingsSchema } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { StepRecord } from "@lean-grpo/orchestrator";
import { describe, expect, it } from "vitest";
import { runAdvice } from "../src/commands/run-advice.js";
import { currentPhase, estimateRemaining, formatDuration, stepTimeLine, type ProgressPlan } from "../src/commands/run-progress.js";
import { runSummaryTable } from "../src/commands/run-summary.js";

const plan: ProgressPlan = { runId: "r", totalSteps: 20, startStep: 0, evaluatesAt: (s) => s === 0 || s % 10 === 0 || s === 20 };

describe("progress", () => {
  it("has no ETA before a step is done, then time per step (evaluations included) times the steps left", () => {
    expect(estimateRemaining(12, 0, 20)).toBeUndefined();
    expect(estimateRemaining(30, 3, 17)).toBe(170);
    expect(formatDuration(0.4)).toBe("0s");
    expect(formatDuration(75)).toBe("1m15s");
    expect(formatDuration(3725)).toBe("1h02m");
  });

  it("says what the run is doing: the first evaluation, then each step and whether it evaluates", () => {
    expect(currentPhase(plan, 0, false)).toBe("held-out eval before step 1");
    expect(currentPhase(plan, 0, true)).toBe("step 1");
    expect(currentPhase(plan, 9, true)).toBe("step 10 + held-out eval");
    expect(currentPhase(plan, 20, true)).toBe("finishing");
  });
});

describe("time split", () => {
  const timings = { generate_s: 0.5, verify_s: 0.1, score_s: 0.1, train_s: 8, sync_s: 0.2, other_s: 0.1, total_s: 9 };
  const step = (n: number, overlap: number): StepRecord =>
    ({ step: n, time: "", metrics: {}, adapter_version: n, timings: { ...timings, rollout_overlap_s: overlap } }) as StepRecord;
  const run = create(RunSchema, { id: "r", state: RunState.COMPLETED, step: 2n, totalSteps: 2n, outputDir: "/runs/r" });

  it("names the generation hidden behind training apart from the step's wall time, in the progress line and the summary", () => {
    const line = stepTimeLine(create(StepTimingsSchema, { totalS: 9, trainS: 8, generateS: 0.5, rolloutOverlapS: 5.6 }));
    expect(line).toBe("step 9.0s: train 8.0s, generate 0.5s + 5.6s hidden behind training");
    expect(stepTimeLine(create(StepTimingsSchema, { totalS: 9, trainS: 3, generateS: 6 }))).toBe("step 9.0s: train 3.0s, generate 6.0s");

    const evals = [{ step: 0, heldout_accuracy: 0.5, solved: 2, problems: 4, seconds: 1.5 }];
    const text = runSummaryTable(run, [step(1, 0), step(2, 5.6)], evals, { evalConfigured: true, width: 200 });
    expect(text).toMatch(/step time\s+│ 18\.0 s over 2 steps, 9\.00 s a step/);
    expect(text).toMatch(/train \+ sync\s+│ 16\.0 s \(88\.9%\) \+ 0\.4 s \(2\.2%\)/);
    expect(text).toMatch(/overlapped\s+│ generation hidden behind training: 5\.6 s/);
    expect(text).toMatch(/held-out eval\s+│ 1\.5 s over 1 evaluation, 1\.5 s each/);
    // On a narrow terminal the value wraps between words: its lines rejoined read as written.
    const narrow = runSummaryTable(run, [step(1, 0), step(2, 5.6)], evals, { evalConfigured: true, width: 60 });
    const lines = narrow.split("\n");
    const first = lines.findIndex((l) => l.includes("overlapped"));
    const rowLines = lines.slice(
      first,
      lines.findIndex((l, i) => i > first && !l.startsWith("│")),
    );
    const value = rowLines.map((l) => l.split("│")[2]!.trim()).join(" ");
    expect(rowLines.length).toBeGreaterThan(1);
    expect(value).toBe(
      "generation hidden behind training: 5.6 s (the next step's rollouts sampled while a step trained, training.async; not in the step time)",
    );
    // A synchronous run hid nothing and says nothing of it.
    expect(runSummaryTable(run, [step(1, 0)], [], { evalConfigured: false })).not.toContain("hidden");
  });
});

describe("run summary", () => {
  const failed = create(RunSchema, {
    id: "run-1",
    state: RunState.FAILED,
    totalSteps: 20n,
    outputDir: "/runs/run-1",
    error: `learner: FAILED_PRECONDITION model.dir "models/nope" does not exist ${"and a long explanation ".repeat(10)}`,
  });

  it("offers no resume for a run that never checkpointed, and resume for one that did", () => {
    expect(runAdvice(failed, false)).toMatch(/start a new run \(no step was checkpointed/);
    expect(runAdvice(failed, false)).not.toContain("--resume");
    const later = create(RunSchema, { ...failed, lastCheckpointStep: 10n, step: 12n });
    expect(runAdvice(later, true)).toBe(
      "fix the cause named in the error, then lean-grpo train --resume run-1 continues from the checkpoint of step 10",
    );
    expect(runAdvice(create(RunSchema, { ...later, state: RunState.STOPPED }), true)).toMatch(/^lean-grpo train --resume run-1/);
    expect(runAdvice(create(RunSchema, { ...later, state: RunState.COMPLETED }), true)).toBeUndefined();
  });

  it("shows a sampled evaluation's pass@k per k, first → last", () => {
    const evals = [
      { step: 0, heldout_accuracy: 0.25, solved: 4, problems: 2, seconds: 1, samples: 8, pass_at: { "1": 0.25, "8": 0.5 } },
      { step: 2, heldout_accuracy: 0.5, solved: 8, problems: 2, seconds: 1, samples: 8, pass_at: { "1": 0.5, "8": 1 } },
    ];
    const text = runSummaryTable(failed, [], evals, { evalConfigured: true, width: 200 });
    expect(text).toMatch(/held-out\s+│ 25\.0% after step 0 -> 50\.0% after step 2 \(pass@1 of 8 samples, 2 problems, 2 evaluations\)/);
    expect(text).toMatch(/pass@1\s+│ 25\.0% after step 0 -> 50\.0% after step 2 \(8 samples per problem\)/);
    expect(text).toMatch(/pass@8\s+│ 50\.0% after step 0 -> 100\.0% after step 2 \(8 samples per problem\)/);
  });

  it("fits a width, wraps the error, tells an eval section that never ran from none", () => {
    const text = runSummaryTable(failed, [], [], { evalConfigured: true, advice: runAdvice(failed, false), width: 100 });
    const widths = text.split("\n").map((l) => l.length);
    expect(Math.max(...widths)).toBeLessThanOrEqual(100);
    expect(text).toContain("no evaluation finished");
    expect(text).not.toContain("no eval section");
    expect(text).toMatch(/│ next\s+│ fix the cause/);
    expect(runSummaryTable(failed, [], [], { evalConfigured: false })).toContain("no eval section");
  });

  it("reports the sampler–learner mismatch first → last, and the adapter check's largest difference", () => {
    const step = (n: number, k3: number, ess: number, check: number) => ({
      step: n,
      time: "",
      adapter_version: n,
      metrics: {
        rollout_corr_k3_kl: k3,
        rollout_corr_chi2_seq: 10 * k3,
        rollout_corr_rollout_is_eff_sample_size: ess,
        rollout_corr_rollout_rs_masked_fraction: 0,
        adapter_check_logp_difference: check,
      },
      timings: {},
      samples: [],
    });
    const text = runSummaryTable(failed, [step(1, 2e-5, 0.99, 9e-8), step(2, 4e-5, 0.97, 3e-7)], [], { evalConfigured: false, width: 120 });
    expect(text).toMatch(/sampler\/learner\s+│ k3 KL 2\.00e-5 -> 4\.00e-5, χ² seq 2\.00e-4 -> 4\.00e-4/);
    expect(text).toMatch(/IS weights\s+│ ESS 99\.0% -> 97\.0%, masked 0\.0% -> 0\.0%/);
    expect(text).toMatch(/adapter check\s+│ max mean \|Δ logp\| 3\.00e-7 over 2 syncs/);
    // A run with no sampler logprobs has none of these rows.
    expect(runSummaryTable(failed, [], [], { evalConfigured: false })).not.toContain("sampler/learner");
  });
});

describe("runs show", () => {
  it("keeps long keys apart from their values and wraps long values under the value column", async () => {
    const { describeRun } = await import("../src/commands/runs-command.js");
    const run = create(RunSchema, {
      id: "r",
      state: RunState.FAILED,
      error: "x ".repeat(60).trim(),
      lastMetrics: { completion_clipped_ratio: 0, reward_mean: 0.123456789 },
    });
    const text = describeRun(run, 60);
    expect(text).toMatch(/^completion_clipped_ratio {2}0$/m);
    expect(text).toMatch(/^reward_mean {15}0\.1235$/m);
    for (const line of text.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(60);
    expect(text.split("\n").filter((l) => /^ {26}x/.test(l)).length).toBeGreaterThan(0);
  });
});
