// What `lean-grpo train` does once a run is submitted, whether the mesh was started here or is
// reached with --url: a stop request becomes StopRun, the run is watched to its end with live
// progress, and its step and held-out records are read back for the summary.
import { existsSync } from "node:fs";
import path from "node:path";
import { toJson } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { type OrchestratorService, type Run, type StepEvent, StepTimingsSchema } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { type EvalRecord, RunOutputs, type StepRecord } from "@lean-grpo/orchestrator";
import { onStopRequest } from "../process/stop-signals.js";
import type { startedRunProgress } from "./run-progress.js";

type Orchestrator = Client<typeof OrchestratorService>;

/**
 * A stop request (a signal, or the npx that started us gone) before the run exists calls
 * `beforeStart` (close what was opened); once the run exists it asks StopRun, which ends the run
 * at a step boundary with a checkpoint, and waits until the command has finished with it.
 */
export function stopRunOnRequest(client: Orchestrator, beforeStart: () => Promise<void> | void) {
  let runId = "";
  let finished = () => {};
  const done = new Promise<void>((resolve) => (finished = resolve));
  const release = onStopRequest(async () => {
    if (runId) {
      await client.stopRun({ runId }).catch(() => {});
      await done;
    } else await beforeStart();
  });
  return {
    /** The run now exists: a stop request stops it. */
    started(id: string) {
      runId = id;
    },
    /** The command is done with the run: remove the handlers and let a pending stop exit. */
    finish() {
      release();
      finished();
    },
  };
}

/** Watches the run from its start to its end, showing each step and log line; returns its final state. */
export async function followRun(
  client: Orchestrator,
  started: Run,
  progress: ReturnType<typeof startedRunProgress>,
  onStep: (event: StepEvent) => void = () => {},
): Promise<Run> {
  let final = started;
  try {
    for await (const event of client.watchRun({ runId: started.id, fromStart: true })) {
      if (event.event.case === "step") {
        progress.step(event.event.value);
        onStep(event.event.value);
      } else if (event.event.case === "stateChange") final = event.event.value;
      else if (event.event.case === "log") progress.log(event.event.value);
    }
  } finally {
    progress.stop();
  }
  return final;
}

/**
 * The run's step and held-out records: its files when this machine sees the orchestrator's run
 * folder (a mesh started here, a shared volume), else the steps as WatchRun sent them.
 */
export async function runRecords(outputDir: string, events: readonly StepEvent[] = []) {
  if (outputDir !== "" && existsSync(path.join(outputDir, "metrics.jsonl"))) {
    const outputs = new RunOutputs(outputDir);
    const [steps, evals, runFile] = await Promise.all([
      outputs.readSteps().catch(() => [] as StepRecord[]),
      outputs.readEvals().catch(() => [] as EvalRecord[]),
      outputs.readRun().catch(() => undefined),
    ]);
    return { steps, evals, runFile, readable: true };
  }
  const steps: StepRecord[] = events.map((e) => ({
    step: Number(e.step),
    time: "",
    adapter_version: Number(e.adapterVersion),
    metrics: { ...e.metrics },
    timings: e.timings ? (toJson(StepTimingsSchema, e.timings, { useProtoFieldName: true }) as Record<string, number>) : {},
  }));
  return { steps, evals: [] as EvalRecord[], runFile: undefined, readable: false };
}
