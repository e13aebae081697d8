// The runs this orchestrator knows: the active one (the learner holds one policy, so one
// run trains at a time) and the finished ones on disk under runs_dir. Starts, resumes,
// stops and streams runs for OrchestratorService.
import { clone, create, toJson, fromJson, type JsonValue } from "@bufbuild/protobuf";
import type { ReasoningVocabulary } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { reasoningMaskOf } from "./config/reasoning-mask.js";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { setMaxListeners } from "node:events";
import path from "node:path";
import { TheoremSchema, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import {
  RunSchema,
  RunState,
  StepEventSchema,
  WatchRunResponseSchema,
  type Run,
  type StartRunRequest,
  type WatchRunResponse,
} from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { checkSafeName, createLogger } from "@lean-grpo/kit";
import type { OrchestratorConfig } from "../config.js";
import { DatasetError } from "../data/dataset-error.js";
import { loadDataset, validateInlineTheorems, type DatasetFiles } from "../data/load-dataset.js";
import { trainingSetWithProofFormat, withRunProofFormat } from "../data/proof-format.js";
import { AUTO_OPTIONS, datasetOptionsOf } from "../data/dataset-options.js";
import { rootPlace } from "../data/dataset-place.js";
import { inMemoryTrainingSet, openTrainingSet, type TrainingSet } from "../data/training-set.js";
import { datasetFiles } from "../data/dataset-files.js";
import { repairEvalSummary } from "./outputs/repair-metrics.js";
import { replayRefusalAlarm } from "./outputs/replay-refusals.js";
import { syncAdapter } from "./training/adapter-sync.js";
import { readJsonObjects } from "@lean-grpo/jsonl";
import { connectMesh, type MeshClients } from "./mesh-clients.js";
import { runPreflight } from "./preflight/run-preflight.js";
import type { RunConfig } from "./config/run-config.js";
import { parseRunConfig } from "./config/parse-run-config.js";
import { promptKeysSet, withModelPrompt } from "./config/model-prompt.js";
import { checkRunLimits } from "./config/run-limits.js";
import { resolvedConfigMessage, runConfigInput, type RunConfigMessage } from "./config/run-config-message.js";
import { listRunDirs, RunOutputs, type RunFile, type StepRecord } from "./outputs/run-outputs.js";
import { ServiceLostError } from "./service-lost-error.js";
import { runLoop } from "./training/training-loop.js";
import { newRunId } from "./config/new-run-id.js";
import { recordedStepEvents, runDetails, timingsToProto, writeRunReport, type ReportRenderer } from "./outputs/run-report.js";
import { sampleToProto } from "./training/step-samples.js";

const FINAL = new Set([RunState.STOPPED, RunState.COMPLETED, RunState.FAILED]);
const log = createLogger("orchestrator");

interface ActiveRun {
  run: Run;
  events: WatchRunResponse[];
  listeners: Set<() => void>;
  stop: boolean;
  /** Whether a checkpoint of this run has been saved (a run that failed before its first cannot be resumed). */
  checkpointed: boolean;
  done: Promise<void>;
  /** Index in `events` of the final state event, once emitted. */
  finalEvent?: number;
  /** The config the run trains with (defaults filled, overrides applied). */
  config: RunConfig;
}

export class RunManager {
  private readonly runs = new Map<string, ActiveRun>();
  private readonly abort = new AbortController();
  /** Where dataset_path and eval.data are read from (data_root). */
  private readonly files: DatasetFiles;
  /**
   * The one-run slot, taken by a StartRun before its first await and held until its run
   * is registered (or it fails): two StartRuns in flight can never both pass the check.
   */
  private starting = false;

  /** `renderReport`: how report.html is drawn (the dashboard's offline page); without one no report is written. */
  constructor(
    private readonly config: OrchestratorConfig,
    private readonly renderReport?: ReportRenderer,
  ) {
    // Every call of a run (rollouts, held-out evaluation at concurrency 256) listens to this
    // one signal; Node warns past 10 listeners, which here is expected, not a leak.
    setMaxListeners(1024, this.abort.signal);
    this.files = datasetFiles(config);
  }

  /** `signal`: the StartRun call's own; the checks stop when its caller cancels. */
  async start(request: StartRunRequest, signal?: AbortSignal): Promise<Run> {
    // Checked and taken synchronously: nothing may run between the check and the reservation.
    if (this.starting)
      throw new ConnectError(
        "another StartRun is being prepared; the learner trains one run at a time (retry once it has started or failed)",
        Code.FailedPrecondition,
      );
    const busy = [...this.runs.values()].find((r) => !FINAL.has(r.run.state));
    if (busy)
      throw new ConnectError(
        `run ${busy.run.id} is ${RunState[busy.run.state]}; the learner trains one run at a time (StopRun it first)`,
        Code.FailedPrecondition,
      );
    this.starting = true;
    try {
      return await this.startReserved(request, signal);
    } finally {
      // A registered run now holds the learner (the busy check above); a failed start frees it.
      this.starting = false;
    }
  }

  private async startReserved(request: StartRunRequest, signal?: AbortSignal): Promise<Run> {
    const resumeId = request.resumeRunId;
    // Before anything else: a run id names a directory under runs_dir.
    if (request.runId) checkSafeName(request.runId, "run_id");
    if (resumeId) checkSafeName(resumeId, "resume_run_id");
    const fresh = resumeId ? undefined : parseRunConfig(runConfigInput(request), request.overrides);
    // Before any dataset is read or service called.
    if (fresh) checkRunLimits(fresh, this.config.run_limits);
    const id = request.runId || resumeId || newRunId(fresh?.exp_name ?? "");
    const outputs = RunOutputs.for(this.config.runs_dir, id);
    // run.json, not the directory: the CLI may have started the run's logs/ in it already.
    if (!resumeId && (await outputs.exists()))
      throw new ConnectError(`run ${id} already exists in ${outputs.dir}; resume it with resume_run_id`, Code.AlreadyExists);

    let config: RunConfig;
    let theorems: TrainingSet;
    let heldout: Theorem[] = [];
    let dataset: string;
    let previous: RunFile | undefined;
    if (resumeId) {
      const from = RunOutputs.for(this.config.runs_dir, resumeId, "resume_run_id");
      if (!(await from.exists())) throw new ConnectError(`run ${resumeId} not found in ${this.config.runs_dir}`, Code.NotFound);
      if (request.runId && request.runId !== resumeId)
        throw new ConnectError("a resumed run keeps its id: leave run_id empty or equal to resume_run_id", Code.InvalidArgument);
      previous = await from.readRun();
      if (previous.state === RunState[RunState.COMPLETED])
        throw new ConnectError(`run ${resumeId} is already COMPLETED`, Code.FailedPrecondition);
      if (previous.checkpointed === false)
        throw new ConnectError(
          `run ${resumeId} has no checkpoint to resume from (it ended before its first one${previous.error ? `: ${previous.error}` : ""}); fix the cause and start a new run`,
          Code.FailedPrecondition,
        );
      const saved = await from.readConfig();
      config = parseRunConfig(saved.run as Record<string, unknown>, request.overrides);
      checkRunLimits(config, this.config.run_limits);
      dataset = String(saved.dataset);
      theorems = await loadTrainingSet(this.files, dataset, [], from, config);
    } else {
      config = fresh!;
      dataset = request.datasetPath || "inline";
      theorems = await loadTrainingSet(this.files, request.datasetPath, request.theorems, outputs, config, true);
    }
    // A record's own proof_format wins; the others take the run's.
    theorems = trainingSetWithProofFormat(theorems, config.dataset.proof_format);

    if (config.eval.data) {
      // Validated whole before the run starts, like the training set.
      heldout = await loadHeldout(this.files, config.eval.data, config);
      if (config.eval.max_problems > 0) heldout = heldout.slice(0, config.eval.max_problems);
      heldout = withRunProofFormat(heldout, config.dataset.proof_format);
    }
    // The checks' own clients: each call bounded by start_deadline_ms and the caller's signal.
    const checks = connectMesh(this.config, { deadlineMs: this.config.start_deadline_ms, signal });
    const closeData = () => theorems.close().catch(() => {});
    let dynamicSampling: boolean;
    let reasoning: ReasoningVocabulary | undefined;
    try {
      // A fresh run's unset prompt keys: the served model's own (a resumed run keeps what it was started with).
      if (fresh) config.prompt = await withModelPrompt(config.prompt, promptKeysSet(runConfigInput(request), request.overrides), checks);
      let algorithmName: string;
      ({ algorithmName, dynamicSampling, reasoning } = await runPreflight(checks, {
        config,
        dataset,
        // A streamed set: its sample, not every record (load-dataset.ts).
        theorems: theorems.checked,
        heldout,
        services: this.config.services,
      }));
      // Every TrainStep names the algorithm as the learner does.
      config.algorithm.name = algorithmName;
    } catch (error) {
      await closeData();
      throw error;
    } finally {
      checks.close();
    }
    const clients = connectMesh(this.config);

    await outputs.create({ run: config, dataset });
    if (dataset === "inline")
      await outputs.writeFile("dataset.jsonl", `${theorems.checked.map((t) => JSON.stringify(toJson(TheoremSchema, t))).join("\n")}\n`);
    const now = timestampFromDate(new Date());
    const run = create(RunSchema, {
      id,
      state: RunState.PENDING,
      algorithm: config.algorithm.name,
      step: BigInt(previous?.last_checkpoint_step ?? 0),
      totalSteps: BigInt(config.training.steps),
      dataset,
      outputDir: outputs.dir,
      createdAt: previous ? timestampFromDate(new Date(previous.created_at)) : now,
      updatedAt: now,
      lastCheckpointStep: BigInt(previous?.last_checkpoint_step ?? 0),
      // A resumed run keeps the error it stopped with until it ends otherwise.
      error: previous?.error ?? "",
      ...(reasoning ? { reasoningVocabulary: reasoning } : {}),
      reasoningMask: reasoningMaskOf(config),
    });
    const active: ActiveRun = {
      run,
      events: [],
      listeners: new Set(),
      stop: false,
      checkpointed: previous !== undefined,
      done: Promise.resolve(),
      config,
    };
    this.runs.set(id, active);
    active.done = this.execute(active, {
      config,
      dynamicSampling,
      theorems,
      heldout,
      outputs,
      clients,
      resume: previous !== undefined,
    }).finally(closeData);
    return run;
  }

  private async execute(
    active: ActiveRun,
    job: {
      config: RunConfig;
      dynamicSampling: boolean;
      theorems: TrainingSet;
      heldout: Theorem[];
      outputs: RunOutputs;
      clients: MeshClients;
      resume: boolean;
    },
  ): Promise<void> {
    const { run } = active;
    const { clients, outputs } = job;
    const signal = this.abort.signal;
    let final = RunState.FAILED;
    const checkpoint = async (step: number) => {
      await clients.withRetry(
        "learner",
        () => clients.learner.saveCheckpoint({ path: outputs.learnerCheckpoint(step) }, { signal }),
        signal,
      );
      run.lastCheckpointStep = BigInt(step);
      active.checkpointed = true;
      await this.persist(active, outputs);
    };
    try {
      let adapter = "";
      let adapterVersion = 0;
      const start = Number(run.lastCheckpointStep);
      if (job.resume) {
        await clients.withRetry(
          "learner",
          () => clients.learner.loadCheckpoint({ path: outputs.learnerCheckpoint(start) }, { signal }),
          signal,
        );
        await outputs.truncateStepsAfter(start);
        const restored = await clients.withRetry("learner", () => clients.learner.getStatus({}, { signal }), signal);
        if (restored.adapterVersion > 0n) {
          const synced = await clients.withRetry("inference", () => syncAdapter(clients, restored.adapterVersion, outputs, signal), signal);
          adapter = synced.name;
          adapterVersion = synced.version;
        }
        this.emitLog(active, `resuming from the checkpoint of step ${start}`);
      } else {
        await checkpoint(0);
      }
      this.setState(active, RunState.RUNNING);
      await this.persist(active, outputs);
      const last = await runLoop(
        {
          runId: run.id,
          config: job.config,
          dynamicSampling: job.dynamicSampling,
          theorems: job.theorems,
          heldout: job.heldout,
          clients,
          outputs,
          adapter,
          adapterVersion,
          signal,
          stopRequested: () => active.stop,
          onEval: async (record) => {
            await outputs.appendEval(record);
            this.emitLog(
              active,
              record.samples
                ? `held-out pass@k after step ${record.step} (${record.samples} samples per problem): ${Object.entries(record.pass_at ?? {})
                    .map(([k, value]) => `pass@${k} ${(100 * value).toFixed(1)}%`)
                    .join(", ")} (${record.problems} problems, ${record.seconds.toFixed(1)} s)`
                : `held-out greedy accuracy after step ${record.step}: ${(100 * record.heldout_accuracy).toFixed(1)}% (${record.solved}/${record.problems}, ${record.seconds.toFixed(1)} s)${repairEvalSummary(record)}`,
            );
          },
          onStep: async (record) => this.recordStep(active, outputs, record),
          onCheckpoint: checkpoint,
        },
        start,
      );
      if (Number(run.lastCheckpointStep) !== last) await checkpoint(last);
      final = last >= job.config.training.steps ? RunState.COMPLETED : RunState.STOPPED;
      // A resumed run that got this far ended without error: the earlier one no longer describes it.
      run.error = "";
    } catch (error) {
      // What failed, as it failed: whether and how to resume is the client's to say (it knows
      // the state and the last checkpoint). A failed resume keeps the error the run first had.
      const message = error instanceof Error ? error.message : String(error);
      run.error = job.resume && run.error ? `${run.error}; resuming it failed: ${message}` : message;
      log.error({ run: run.id, err: error }, "run ended");
      final = error instanceof ServiceLostError || signal.aborted ? RunState.STOPPED : RunState.FAILED;
    } finally {
      clients.close();
      // Files first, then the final event: a watcher that sees it can read them.
      run.state = final;
      await this.persist(active, outputs).catch(() => {});
      await this.writeReport(run, outputs);
      this.setState(active, final);
    }
  }

  private async recordStep(active: ActiveRun, outputs: RunOutputs, record: StepRecord): Promise<void> {
    active.run.step = BigInt(record.step);
    active.run.lastMetrics = record.metrics;
    const alarm = replayRefusalAlarm(record.step, record.metrics);
    if (alarm) log.error({ run: active.run.id, step: record.step }, alarm);
    active.run.updatedAt = timestampFromDate(new Date());
    await outputs.appendStep(record);
    await this.persist(active, outputs);
    await this.writeReport(active.run, outputs);
    this.emit(active, {
      event: {
        case: "step",
        value: create(StepEventSchema, {
          step: BigInt(record.step),
          metrics: record.metrics,
          timings: timingsToProto(record.timings),
          adapterVersion: BigInt(record.adapter_version),
          samples: (record.samples ?? []).map(sampleToProto),
        }),
      },
    });
  }

  /** A report that cannot be written is logged, never the end of the run. */
  private async writeReport(run: Run, outputs: RunOutputs): Promise<void> {
    if (!this.renderReport) return;
    await writeRunReport(run, outputs, this.renderReport).catch((error: unknown) =>
      log.warn({ run: run.id, err: error }, "report.html not written"),
    );
  }

  /** StartRunResponse.config: the config a run started here trains with. */
  resolvedConfig(id: string): RunConfigMessage | undefined {
    const active = this.runs.get(id);
    return active ? resolvedConfigMessage(active.config) : undefined;
  }

  /** GetRun: the run, and from its directory its config, checkpoints, adapters and held-out evaluations. */
  async details(id: string) {
    const run = await this.get(id);
    return runDetails(run, RunOutputs.for(this.config.runs_dir, id));
  }

  stop(id: string): Run {
    checkSafeName(id, "run_id");
    const active = this.runs.get(id);
    if (!active) throw new ConnectError(`run ${id} is not running here`, Code.NotFound);
    if (!FINAL.has(active.run.state)) {
      active.stop = true;
      this.setState(active, RunState.STOPPING);
    }
    return active.run;
  }

  async get(id: string): Promise<Run> {
    const active = this.runs.get(id);
    if (active) return active.run;
    const outputs = RunOutputs.for(this.config.runs_dir, id);
    // A run folder that is a symlink is refused here (INVALID_ARGUMENT naming it), never read.
    if (!(await outputs.exists())) throw new ConnectError(`run ${id} not found in ${this.config.runs_dir}`, Code.NotFound);
    return runFromFile(await outputs.readRun(), outputs.dir);
  }

  async list(): Promise<Run[]> {
    const byId = new Map<string, Run>();
    for (const outputs of await listRunDirs(this.config.runs_dir)) {
      const file = await outputs.readRun().catch(() => undefined);
      if (file) byId.set(file.id, runFromFile(file, outputs.dir));
    }
    for (const [id, active] of this.runs) byId.set(id, active.run);
    return [...byId.values()].sort((a, b) => timestampDate(b.createdAt!).getTime() - timestampDate(a.createdAt!).getTime());
  }

  async *watch(id: string, fromStart: boolean, signal: AbortSignal): AsyncGenerator<WatchRunResponse> {
    const active = this.runs.get(id);
    if (!active) {
      // A run that is not live here: its recorded steps, then its final state.
      const run = await this.get(id);
      if (fromStart) yield* await recordedStepEvents(id, RunOutputs.for(this.config.runs_dir, id));
      yield create(WatchRunResponseSchema, { runId: id, time: timestampFromDate(new Date()), event: { case: "stateChange", value: run } });
      return;
    }
    // The stream ends on the final state event and on nothing else: run.state turns final
    // before that event is emitted (the files are written in between), so ending on the
    // state would leave a watcher that joins in that window without COMPLETED/FAILED.
    // A watcher that joins after the end starts at the final event.
    let next = fromStart ? 0 : Math.min(active.events.length, active.finalEvent ?? Number.POSITIVE_INFINITY);
    while (!signal.aborted) {
      while (next < active.events.length) {
        const event = active.events[next++]!;
        yield event;
        if (event.event.case === "stateChange" && FINAL.has(event.event.value.state)) return;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          active.listeners.delete(wake);
          signal.removeEventListener("abort", wake);
          resolve();
        };
        active.listeners.add(wake);
        signal.addEventListener("abort", wake);
      });
    }
  }

  /** Waits for the active runs to end (tests, CLI shutdown). */
  async settle(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.done));
  }

  async shutdown(): Promise<void> {
    for (const active of this.runs.values()) active.stop = true;
    await this.settle();
  }

  private setState(active: ActiveRun, state: RunState): void {
    active.run.state = state;
    active.run.updatedAt = timestampFromDate(new Date());
    // A snapshot: create() would hand back active.run itself, and every state event would
    // then read as the run's latest state (a replayed RUNNING event as COMPLETED).
    this.emit(active, { event: { case: "stateChange", value: clone(RunSchema, active.run) } });
    if (FINAL.has(state)) active.finalEvent = active.events.length - 1;
  }

  private emitLog(active: ActiveRun, line: string): void {
    this.emit(active, { event: { case: "log", value: line } });
  }

  private emit(active: ActiveRun, init: Pick<WatchRunResponse, "event">): void {
    active.events.push(create(WatchRunResponseSchema, { runId: active.run.id, time: timestampFromDate(new Date()), ...init }));
    for (const wake of [...active.listeners]) wake();
  }

  private async persist(active: ActiveRun, outputs: RunOutputs): Promise<void> {
    const r = active.run;
    await outputs.writeRun({
      id: r.id,
      state: RunState[r.state],
      algorithm: r.algorithm,
      step: Number(r.step),
      total_steps: Number(r.totalSteps),
      dataset: r.dataset,
      created_at: timestampDate(r.createdAt!).toISOString(),
      updated_at: timestampDate(r.updatedAt!).toISOString(),
      error: r.error,
      last_checkpoint_step: Number(r.lastCheckpointStep),
      checkpointed: active.checkpointed,
      last_metrics: r.lastMetrics,
      ...(r.reasoningVocabulary
        ? {
            reasoning: {
              n_s: r.reasoningVocabulary.standardSize,
              n_r: r.reasoningVocabulary.reasoningSize,
              map_sha256: r.reasoningVocabulary.mapSha256,
              mask: active.config.model.reasoning_mask,
              markers: [r.reasoningVocabulary.startMarker, r.reasoningVocabulary.endMarker] as [string, string],
            },
          }
        : {}),
    });
  }
}

/** The run's training set: its inline theorems (kept in the run folder), or its file, read whole or streamed (data/training-set.ts). */
async function loadTrainingSet(
  files: DatasetFiles,
  datasetPath: string,
  inline: readonly Theorem[],
  outputs: RunOutputs,
  config: RunConfig,
  fresh = false,
): Promise<TrainingSet> {
  try {
    if (datasetPath === "inline" || (!datasetPath && !fresh)) {
      const file = path.join(outputs.dir, "dataset.jsonl");
      const text = await outputs.readFile("dataset.jsonl");
      if (text === undefined) throw new ConnectError(`${file} does not exist: the run's inline theorems are gone`, Code.FailedPrecondition);
      const saved = readJsonObjects(text, file).map(({ record }) => fromJson(TheoremSchema, record as JsonValue));
      return inMemoryTrainingSet(config.dataset.max_train_samples !== null ? saved.slice(0, config.dataset.max_train_samples) : saved);
    }
    if (datasetPath && inline.length > 0) throw new ConnectError("set exactly one of dataset_path and theorems", Code.InvalidArgument);
    if (datasetPath)
      return await openTrainingSet(rootPlace(files.root, "dataset_path"), datasetPath, datasetOptionsOf(config.dataset), {
        maxBytes: files.maxBytes,
        maxTrainSamples: config.dataset.max_train_samples,
      });
    validateInlineTheorems(inline);
    return inMemoryTrainingSet(config.dataset.max_train_samples !== null ? inline.slice(0, config.dataset.max_train_samples) : [...inline]);
  } catch (error) {
    if (error instanceof DatasetError) throw new ConnectError(error.message, Code.InvalidArgument);
    throw error;
  }
}

/** The held-out set, read whole; its layout is detected from its own columns, dataset.header serves its records too. */
async function loadHeldout(files: DatasetFiles, given: string, config: RunConfig): Promise<Theorem[]> {
  try {
    return await loadDataset(files, given, "eval.data", { ...AUTO_OPTIONS, header: config.dataset.header });
  } catch (error) {
    if (error instanceof DatasetError) throw new ConnectError(error.message, Code.InvalidArgument);
    throw error;
  }
}

function runFromFile(file: RunFile, dir: string): Run {
  return create(RunSchema, {
    id: file.id,
    state: RunState[file.state as keyof typeof RunState] ?? RunState.UNSPECIFIED,
    algorithm: file.algorithm,
    step: BigInt(file.step),
    totalSteps: BigInt(file.total_steps),
    dataset: file.dataset,
    outputDir: dir,
    createdAt: timestampFromDate(new Date(file.created_at)),
    updatedAt: timestampFromDate(new Date(file.updated_at)),
    error: file.error,
    lastMetrics: file.last_metrics,
    lastCheckpointStep: BigInt(file.last_checkpoint_step),
    ...(file.reasoning
      ? {
          reasoningVocabulary: {
            standardSize: file.reasoning.n_s,
            reasoningSize: file.reasoning.n_r,
            mapSha256: file.reasoning.map_sha256,
            startMarker: file.reasoning.markers[0],
            endMarker: file.reasoning.markers[1],
          },
          reasoningMask: ({ free: 1, gated: 2, strict: 3 } as Record<string, number>)[file.reasoning.mask] ?? 0,
        }
      : {}),
  });
}
