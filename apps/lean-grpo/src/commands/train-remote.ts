// `lean-grpo train DATA --url URL`: the same run as `lean-grpo train`, submitted to an
// orchestrator that is already running (`serve all`, a topology, compose, Kubernetes) instead
// of a mesh started here. The config is read and checked as for the local command; the
// orchestrator's StartRun then checks what only it can see (the dataset and held-out set on its
// filesystem, relative to its data_root; its services), refusing with INVALID_ARGUMENT before
// anything runs. Progress, summary, exit codes and Ctrl-C (StopRun) are the local command's.
import path from "node:path";
import { OrchestratorService, RunState, type StepEvent } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { callerAuth, createServiceClient, envAuthToken, rpcClientTracing } from "@lean-grpo/kit";
import type { RunConfigMessage } from "@lean-grpo/orchestrator";
import { followRun, runRecords, stopRunOnRequest } from "./followed-run.js";
import { runAdvice } from "./run-advice.js";
import { startedRunProgress } from "./run-progress.js";
import { runSummaryTable } from "./run-summary.js";
import type { TrackingConfig } from "../tracking/tracking-config.js";
import type { TrainFile } from "./train-file.js";

/** What `lean-grpo train` planned (train-command.ts's TrainPlan), as far as a remote run needs it. */
export interface RemoteTrainPlan {
  file: TrainFile;
  runConfig: RunConfigMessage;
  tracking: TrackingConfig;
  runId: string;
  notes: string[];
  options: { resume?: string; ui?: boolean | string };
}

/**
 * What the plan holds that configures the mesh `train` would start here, not the run: with
 * --url the running mesh's own config decides, and each such section is named in a note.
 */
export function remoteTrainNotes(plan: Pick<RemoteTrainPlan, "file" | "tracking">): string[] {
  const notes: string[] = [];
  const sections = Object.entries(plan.file.services ?? {})
    .filter(([, section]) => section !== undefined && Object.keys(section).length > 0)
    .map(([name]) => `services.${name}`);
  if (sections.length > 0)
    notes.push(
      `${sections.join(", ")} configure${sections.length === 1 ? "s" : ""} the services \`lean-grpo train\` starts here; ` +
        "with --url the running mesh's own config decides (give it the same keys when starting it, e.g. `lean-grpo serve all learner.optimizer.learning_rate=0.001`)",
    );
  if (plan.tracking.trackers.length > 0)
    notes.push(
      `logging (${plan.tracking.trackers.join(", ")}) writes beside a run started here; with --url it is not written: read the run's metrics.jsonl where the orchestrator keeps it`,
    );
  return notes;
}

/** Refusals of flags that need the mesh in this process. */
export function checkRemoteTrainOptions(options: RemoteTrainPlan["options"]): void {
  if (options.ui !== undefined && options.ui !== false)
    throw new Error("--ui serves the dashboard of a mesh started here; with --url run `lean-grpo dashboard --url URL` beside it");
}

/** Submits the planned run to the orchestrator at plan.options.url and follows it to its end. */
export async function trainThroughOrchestrator(plan: RemoteTrainPlan, url: string): Promise<void> {
  const { runConfig, runId, options } = plan;
  checkRemoteTrainOptions(options);
  for (const note of [...plan.notes, ...remoteTrainNotes(plan)]) process.stderr.write(`lean-grpo: note: ${note}\n`);
  const { client, transport } = createServiceClient(OrchestratorService, {
    endpoints: [url],
    // A deployed mesh requires its token (LEANGRPO_AUTH_TOKEN), as every client inside it presents.
    interceptors: [rpcClientTracing(), ...callerAuth(envAuthToken())],
  });
  const stopper = stopRunOnRequest(client, () => transport.close());
  try {
    // Paths are the orchestrator's (relative to its data_root), sent as given.
    const response = await client.startRun(
      options.resume
        ? { resumeRunId: options.resume, datasetPath: plan.file.dataset.path ?? "" }
        : { runId, datasetPath: plan.file.dataset.path ?? "", runConfig },
    );
    stopper.started(response.run!.id);
    const evalData = response.config?.eval?.data ?? "";
    const progress = startedRunProgress(response.run!, response.config?.eval, process.stdout.isTTY === true);
    const events: StepEvent[] = [];
    const final = await followRun(client, response.run!, progress, (event) => events.push(event));
    const { steps, evals, runFile, readable } = await runRecords(final.outputDir, events);
    const summary = runSummaryTable(final, steps, evals, {
      evalConfigured: evalData !== "",
      advice: runAdvice(final, runFile?.checkpointed !== false),
      ...(readable ? {} : { heldoutNote: `- (kept with the run on the orchestrator's side: ${path.join(final.outputDir, "eval.jsonl")})` }),
      ...(process.stdout.columns ? { width: process.stdout.columns } : {}),
    });
    process.stdout.write(`${summary}\nservice logs: the orchestrator's side, ${path.join(final.outputDir, "logs")}\n`);
    if (final.state === RunState.FAILED) process.exitCode = 1;
  } finally {
    transport.close();
    stopper.finish();
  }
}
