// A run as read back from its directory: GetRun's details (config, checkpoints, adapters,
// held-out evaluations) and the step events WatchRun replays. The same messages feed a
// live watcher and report.html, so a finished run reads the same in the dashboard and
// offline. The HTML itself comes from a renderer the composition root hands in (the
// dashboard page lives in an app, which a service may not import).
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  GetRunResponseSchema,
  HeldoutEvaluationSchema,
  StepTimingsSchema,
  WatchRunResponseSchema,
  type GetRunResponse,
  type Run,
  type WatchRunResponse,
} from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import path from "node:path";
import type { RunOutputs, StepRecord } from "./run-outputs.js";
import { sampleToProto, type SampleRecord } from "../training/step-samples.js";

/** What report.html shows: the run with its details, and its events (steps, then its state). */
export interface RunReport {
  details: GetRunResponse;
  events: WatchRunResponse[];
}

/** Renders a run's report as one self-contained HTML page. */
export type ReportRenderer = (report: RunReport) => string | Promise<string>;

/** GetRun's answer for a run whose outputs are on this filesystem. */
export async function runDetails(run: Run, outputs: RunOutputs): Promise<GetRunResponse> {
  const [config, artifacts, evals] = await Promise.all([
    outputs.readConfig().catch(() => undefined),
    outputs.artifacts(),
    outputs.readEvals().catch(() => []),
  ]);
  return create(GetRunResponseSchema, {
    run,
    ...(config ? { config: config as JsonObject } : {}),
    ...artifacts,
    evaluations: evals.map((e) =>
      create(HeldoutEvaluationSchema, {
        step: BigInt(e.step),
        accuracy: e.heldout_accuracy,
        solved: e.solved,
        problems: e.problems,
        seconds: e.seconds,
        samples: e.samples ?? 1,
        passAt: Object.entries(e.pass_at ?? {}).map(([k, value]) => ({ k: Number(k), value })),
      }),
    ),
  });
}

/** The step events of a run's recorded steps, each with the completions kept of it. */
export async function recordedStepEvents(runId: string, outputs: RunOutputs): Promise<WatchRunResponse[]> {
  const [steps, samples] = await Promise.all([outputs.readSteps(), outputs.readSamples()]);
  const byStep = new Map(samples.map((s) => [s.step, s.samples]));
  return steps.map((record) => stepEventResponse(runId, record, byStep.get(record.step) ?? record.samples ?? []));
}

export function stepEventResponse(runId: string, record: StepRecord, samples: readonly SampleRecord[]): WatchRunResponse {
  const t = record.timings;
  return create(WatchRunResponseSchema, {
    runId,
    time: timestampFromDate(new Date(record.time)),
    event: {
      case: "step",
      value: {
        step: BigInt(record.step),
        metrics: record.metrics,
        timings: timingsToProto(t),
        adapterVersion: BigInt(record.adapter_version),
        samples: samples.map(sampleToProto),
      },
    },
  });
}

/** Writes runs/<id>/report.html for `run` as it stands now; returns the file. */
export async function writeRunReport(run: Run, outputs: RunOutputs, render: ReportRenderer): Promise<string> {
  const [details, steps] = await Promise.all([runDetails(run, outputs), recordedStepEvents(run.id, outputs)]);
  const final = create(WatchRunResponseSchema, {
    runId: run.id,
    time: run.updatedAt ?? timestampFromDate(new Date()),
    event: { case: "stateChange", value: run },
  });
  const file = path.join(outputs.dir, "report.html");
  await outputs.writeFile("report.html", await render({ details, events: [...steps, final] }));
  return file;
}

/** A step record's timings (seconds by phase, as metrics.jsonl holds them) as the contract's StepTimings. */
export function timingsToProto(t: Record<string, number>) {
  return create(StepTimingsSchema, {
    generateS: t.generate_s ?? 0,
    verifyS: t.verify_s ?? 0,
    scoreS: t.score_s ?? 0,
    trainS: t.train_s ?? 0,
    syncS: t.sync_s ?? 0,
    otherS: t.other_s ?? 0,
    totalS: t.total_s ?? 0,
    rolloutOverlapS: t.rollout_overlap_s ?? 0,
  });
}
