// `lean-grpo train DATA`: starts every service in this process on loopback (the embedded
// default) and drives a run through OrchestratorService over gRPC, showing a progress bar
// (JSON lines when stdout is not a TTY) and a summary table at the end.
import type { Command } from "commander";
import path from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import {
  callerAuth,
  ConfigError,
  createLogger,
  type ConfigIssue,
  createServiceClient,
  isPlainObject,
  rpcClientTracing,
  surviveUnhandledRejections,
  type SourceEntry,
} from "@lean-grpo/kit";
import { ALGORITHM_NAMES, algorithmNamed } from "@lean-grpo/learner";
import { RunConfigMessageSchema, newRunId, type RunConfigMessage } from "@lean-grpo/orchestrator";
import { startedRunProgress } from "./run-progress.js";
import { runSummaryTable } from "./run-summary.js";
import { runAdvice } from "./run-advice.js";
import { checkDatasetFile, configDir, loadTrainConfig, modelGroupOf, trainRunConfig } from "./train-config.js";
import { applyModelPrompt } from "../config/model-prompt.js";
import { startRunLogs } from "./run-logs.js";
import { followRun, runRecords, stopRunOnRequest } from "./followed-run.js";
import { tracedAction } from "../process/process-tracing.js";
import { meshOrchestratorConfig, resolveMeshServices, startMesh, type MeshOptions } from "../mesh/start-mesh.js";
import { reasoningKeys } from "../mesh/mesh-model.js";
import { rootRelative } from "../mesh/local-paths.js";
import { dashboardCommand } from "./dashboard-command.js";
import { SEED_NAMES, SeedTranslation, seedNameTarget, sourceLabel } from "../config/seed-names.js";
import { applySeedDerived } from "../config/seed-derived.js";
import { datasetSize } from "../config/dataset-size.js";
import { collectIssues, preflightTrain, type TrainPreflight } from "./train-preflight.js";
import { KEY_FLAGS } from "../config/train-flags.js";
import { resolveTracking, type TrackingConfig } from "../tracking/tracking-config.js";
import { TrainFileSchema, type TrainFile } from "./train-file.js";
import { startTrackers } from "../tracking/run-trackers.js";
import { trackedConfig } from "../tracking/tracked-config.js";
import { trainThroughOrchestrator } from "./train-remote.js";

interface TrainOptions {
  config?: string;
  algorithm?: string;
  algoConfig?: string;
  numGenerations?: string;
  steps?: string;
  lr?: string;
  model_path?: string;
  output_dir?: string;
  max_samples?: string;
  resume?: string;
  configDir?: string;
  verbose?: boolean;
  ui?: boolean | string;
  url?: string;
}

/** What `lean-grpo train` will do, resolved from its arguments before any service starts. */
export interface TrainPlan {
  file: TrainFile;
  runConfig: RunConfigMessage;
  tracking: TrackingConfig;
  resume?: string;
  runId: string;
  options: TrainOptions;
  /** What the plan chose that the user may not expect (a group's value the file replaces), printed before the run starts. */
  notes: string[];
  /** Choices the run keeps that the model was not made for (a prompt other than its own), printed before the run starts. */
  warnings: string[];
}

export function registerTrainCommand(program: Command, run: (plan: TrainPlan) => Promise<void> = runTrain): Command {
  return program
    .command("train")
    .description("train on a Lean or math JSONL with every service started here on loopback")
    .argument(
      "[data]",
      "dataset JSONL (Lean: name/statement or formal_statement; math: problem/answer or question/ground_truth); or dataset=NAME / dataset.path",
    )
    .argument(
      "[overrides...]",
      "config groups (model=arith-tiny algorithm=dapo dataset=arith) and dotted overrides (training.steps=50); the seeds' names too (see below)",
    )
    .option("-c, --config <file>", "YAML train config, e.g. configs/train/arith.yaml (the seeds' YAML keys are read too)")
    .option("-a, --algorithm <name>", ALGORITHM_NAMES.join(" | "))
    .option("--algo-config <json>", "algorithm knobs as JSON (lean-grpo algorithms NAME lists them)")
    .option("-n, --num-generations <G>", "completions per prompt, the group size (training.num_generations; seed 001's -n)")
    .option("--steps <n>", "training steps (training.steps)")
    .option("--lr <rate>", "learning rate (services.learner.optimizer.learning_rate; seed 002)")
    .option("--model_path <dir>", "model directory (model.dir; seed 004)")
    .option("--output_dir <dir>", "folder of the run directories (runs_dir; seed 004)")
    .option("--max_samples <n>", "train on the dataset's first N records (dataset.max_train_samples; seed 004)")
    .option("--resume <run>", "continue a stopped or failed run from its last checkpoint")
    .option("--config-dir <dir>", "folder of the config groups model/, dataset/, algorithm/ (default ./configs, else the repo's)")
    .option("--verbose", "also print the services' JSON logs on stderr (they always go to runs/<id>/logs/)")
    .option("--ui [port]", "also serve the browser dashboard of the run (default port 8080; 0 picks a free one)")
    .option(
      "--url <url>",
      "submit the run to a running orchestrator (serve all, a topology, a deployment), e.g. http://127.0.0.1:50055; paths are on its filesystem",
    )
    .addHelpText("after", seedNamesHelp())
    .action(
      tracedAction("lean-grpo train", async (dataArg: string | undefined, words: string[], options: TrainOptions) => {
        // The mesh serves in this process: a rejection nobody handled is logged and counted, not fatal.
        surviveUnhandledRejections(createLogger("lean-grpo"));
        await run(await planTrain(dataArg, words, options));
      }),
    );
}

/**
 * Everything that can be checked before a service starts: the config from every source with
 * the seeds' names applied, the run config, the model directory, the dataset, the tracking
 * section, and the pre-flight of train-preflight.ts (services, algorithm, run, REPL, prompts).
 */
export async function planTrain(dataArg: string | undefined, words: string[], options: TrainOptions): Promise<TrainPlan> {
  // A first word that sets something (model=x, training.steps=2) is not the dataset.
  const [data, overrides] = dataArg?.includes("=") ? [undefined, [dataArg, ...words]] : [dataArg, words];
  const flags: Record<string, unknown> = {};
  const flagNames: Record<string, string> = {};
  if (options.algorithm) [flags["algorithm.name"], flagNames["algorithm.name"]] = [options.algorithm, `--algorithm ${options.algorithm}`];
  if (options.algoConfig) [flags["algorithm.config"], flagNames["algorithm.config"]] = [algoConfig(options.algoConfig), "--algo-config"];
  // --algorithm and --algo-config are set above (the latter is JSON).
  for (const { option, flag, key } of KEY_FLAGS.filter((f) => f.option !== "algorithm" && f.option !== "algoConfig")) {
    const value = options[option];
    if (typeof value === "string") [flags[key], flagNames[key]] = [value, `${flag} ${value}`];
  }
  if (data) [flags["dataset.path"], flagNames["dataset.path"]] = [data, data];
  const root = configDir(options.configDir);
  // Every problem found before the services start, reported at once (exit 2): a refused seed name
  // does not hide a derived setting that cannot apply, nor a prompt that overruns the context.
  const issues: ConfigIssue[] = [];
  const compose = async (words: readonly string[]) => {
    const seeds = new SeedTranslation();
    const notes: string[] = [];
    let modelGroup = false;
    let loaded: TrainFile;
    try {
      loaded = loadTrainConfig(TrainFileSchema, {
        file: options.config,
        words,
        flags,
        flagNames,
        configDir: root,
        translate: (entries) => {
          notes.push(...groupValuesTheFileReplaces(entries));
          modelGroup ||= entries.some((e) => e.layer === "group" && e.source.startsWith("model="));
          return seeds.translate(entries);
        },
      });
    } catch (error) {
      // Without a config there is nothing more to check: the refused names and the config's own problems.
      if (error instanceof ConfigError) throw new ConfigError([...seeds.issues, ...error.issues]);
      throw error;
    }
    const derivedIssues: ConfigIssue[] = [];
    // Epochs count passes over the data: its records as the orchestrator will read them.
    const records = seeds.derived.has("epochs") ? await datasetSize(loaded.dataset) : undefined;
    const derived = applySeedDerived(loaded, seeds, derivedIssues, records);
    return { seeds, notes, modelGroup, issues: [...seeds.issues, ...derivedIssues], derived };
  };
  let composed = await compose(overrides);
  // A model directory with a group (models/arith-tiny: model=arith-tiny) brings the group's settings
  // when no group chose a model: the data-file path trains the shipped model as model=arith-tiny does.
  const implicitModel = composed.modelGroup ? undefined : modelGroupOf(composed.derived.model.dir, root);
  if (implicitModel) {
    composed = await compose([`model=${implicitModel}`, ...overrides]);
    // Not typed by the user: a file's value over it is no surprise worth a note.
    composed.notes = composed.notes.filter((note) => !note.includes(` from model=${implicitModel} (`));
  }
  const { seeds, notes } = composed;
  issues.push(...composed.issues);
  const file = collectIssues(issues, () => canonicalAlgorithm(composed.derived)) ?? composed.derived;
  if (!file.dataset.path && !options.resume)
    issues.push({
      path: "dataset.path",
      source: "command line",
      message: "no dataset: give DATA (a JSONL file), dataset=NAME (configs/dataset) or dataset.path=FILE",
    });
  const loggingKeysGiven = [...seeds.explicit.keys()].some((key) => key.startsWith("logging."));
  // A running orchestrator reads the dataset on its side (relative to its data_root) and checks the run at StartRun.
  if (options.url) {
    const runConfig = collectIssues(issues, () => trainRunConfig(file));
    const tracking = collectIssues(issues, () => resolveTracking(file.logging, loggingKeysGiven));
    if (issues.length > 0 || !runConfig || !tracking) throw new ConfigError(issues);
    const runId = options.resume ?? newRunId(runConfig.expName);
    return { file, runConfig, tracking, runId, options, notes, warnings: [], ...(options.resume ? { resume: options.resume } : {}) };
  }
  const datasetFound =
    file.dataset.path !== "" &&
    collectIssues(issues, () => {
      checkDatasetFile(file.dataset.path);
      return true;
    }) === true;
  // The orchestrator started here reads files under the working directory, relative to it (local-paths.ts).
  if (datasetFound) file.dataset.path = rootRelative(file.dataset.path, "the dataset");
  const runConfig = collectIssues(issues, () => trainRunConfig(file));
  if (runConfig?.eval?.data) runConfig.eval.data = rootRelative(runConfig.eval.data, "eval.data");
  // A resumed run samples with the prompt it was started with (its saved config).
  const warnings: string[] = [];
  if (runConfig && !options.resume) {
    const warning = collectIssues(issues, () => applyModelPrompt(runConfig, file.model.dir).warning);
    if (warning) warnings.push(warning);
  }
  const tracking = collectIssues(issues, () => resolveTracking(file.logging, loggingKeysGiven));
  const mesh = collectIssues(issues, () => meshOptions(file));
  if (runConfig && mesh) {
    issues.push(
      ...(await preflightTrain({
        file,
        runConfig,
        mesh,
        resume: options.resume !== undefined,
        configDir: root,
        datasetFound: datasetFound || options.resume !== undefined,
        ...maxPromptLength(seeds),
      })),
    );
  }
  if (issues.length > 0 || !runConfig || !tracking) throw new ConfigError(issues);
  const runId = options.resume ?? newRunId(runConfig.expName);
  return { file, runConfig, tracking, runId, options, notes, warnings, ...(options.resume ? { resume: options.resume } : {}) };
}

/** TRL's max_prompt_length, as given, for the pre-flight's prompt check. */
function maxPromptLength(seeds: SeedTranslation): Pick<TrainPreflight, "maxPromptLength"> {
  const given = seeds.derived.get("max_prompt_length");
  return given ? { maxPromptLength: { value: given.value as number, name: given.name, source: given.source } } : {};
}

/** The embedded mesh a plan starts: the model, the service sections, the orchestrator's section with the run folder. */
export function meshOptions(file: TrainFile): MeshOptions {
  const { orchestrator, ...services } = file.services;
  if (orchestrator?.runs_dir !== undefined)
    throw new ConfigError([
      {
        path: "services.orchestrator.runs_dir",
        source: "train config",
        message:
          "services.orchestrator.runs_dir: the run folder of `lean-grpo train` is the top-level runs_dir (seed 004's --output_dir); set that",
      },
    ]);
  return {
    modelDir: file.model.dir,
    reasoning: reasoningKeys(file.model),
    services,
    orchestrator: { ...orchestrator, runs_dir: file.runs_dir },
  };
}

/** The algorithm named as the learner names it (the seeds write "DGPO"), when the learner is the one started here. */
function canonicalAlgorithm(file: TrainFile): TrainFile {
  const algorithm = (file as Record<string, unknown>).algorithm as { name?: unknown } | undefined;
  if (file.services.learner?.url !== undefined || typeof algorithm?.name !== "string") return file;
  try {
    return { ...file, algorithm: { ...algorithm, name: algorithmNamed(algorithm.name).name } } as TrainFile;
  } catch (error) {
    throw new ConfigError([{ path: "algorithm.name", source: "train config", message: `algorithm.name: ${(error as Error).message}` }]);
  }
}

/**
 * A config group sits under the --config file (command line > file > group > default, as in
 * Hydra), so a key both set is the file's: each such key whose values differ is a note, since a
 * group typed on the command line might be expected to win.
 */
function groupValuesTheFileReplaces(entries: readonly SourceEntry[]): string[] {
  const leaves = (entry: SourceEntry): [string, unknown][] =>
    isPlainObject(entry.value) && Object.keys(entry.value).length > 0
      ? Object.entries(entry.value).flatMap(([key, value]) => leaves({ ...entry, path: [...entry.path, key], value }))
      : [[entry.path.join("."), entry.value]];
  const fromGroups = new Map<string, { value: unknown; source: string }>();
  for (const entry of entries.filter((e) => e.layer === "group"))
    for (const [key, value] of leaves(entry)) fromGroups.set(key, { value, source: entry.source });
  return entries
    .filter((e) => e.layer === "file")
    .flatMap(leaves)
    .flatMap(([key, value]) => {
      const group = fromGroups.get(key);
      if (!group || JSON.stringify(group.value) === JSON.stringify(value)) return [];
      return [
        `${key} is ${JSON.stringify(value)} from the --config file, not ${JSON.stringify(group.value)} from ${group.source}: a file wins over a group; give ${key}=... on the command line to choose`,
      ];
    });
}

/** Starts the mesh and drives the planned run through OrchestratorService over gRPC. */
async function runTrain(plan: TrainPlan): Promise<void> {
  if (plan.options.url) return trainThroughOrchestrator(plan, plan.options.url);
  const { file, runConfig, runId, options } = plan;
  const { runs_dir, dataset } = file;
  for (const note of plan.notes) process.stderr.write(`lean-grpo: note: ${note}\n`);
  for (const warning of plan.warnings) process.stderr.write(`lean-grpo: warning: ${warning}\n`);
  const logs = startRunLogs(runs_dir, runId, { verbose: options.verbose === true });
  const mesh = await startMesh(meshOptions(file));
  const { client, transport } = createServiceClient(OrchestratorService, {
    endpoints: [mesh.urls.orchestrator!],
    // StartRun and WatchRun as children of the command's span; each step is a trace of its own.
    // The mesh's token (LEANGRPO_AUTH_TOKEN or the config's), which its orchestrator requires.
    interceptors: [rpcClientTracing(), ...callerAuth(mesh.token)],
  });
  const ui = options.ui
    ? await dashboardCommand(
        { url: mesh.urls.orchestrator!, port: options.ui === true ? "8080" : options.ui, host: "127.0.0.1", runsDir: runs_dir },
        { meshToken: mesh.token },
      )
    : undefined;
  if (ui) process.stderr.write(`lean-grpo dashboard: ${ui.pageUrl}\n`);
  // A stop request before the run exists drains the mesh; after, the run ends as any other: summary, mesh drained.
  const stopper = stopRunOnRequest(client, async () => {
    transport.close();
    await mesh.shutdown();
  });
  try {
    const response = await logs.whileStarting(() =>
      client.startRun(
        options.resume ? { resumeRunId: options.resume, datasetPath: dataset.path } : { runId, datasetPath: dataset.path, runConfig },
      ),
    );
    stopper.started(response.run!.id);
    const evalData = response.config?.eval?.data ?? "";
    const progress = startedRunProgress(response.run!, response.config?.eval, process.stdout.isTTY === true);
    // A tracker's trouble is said where the run is watched and kept in the run's logs (logs/tracking.log).
    const trackingLog = createLogger("tracking");
    const trackers = startTrackers(plan.tracking, {
      runId: response.run!.id,
      runDir: response.run!.outputDir,
      name: plan.tracking.name ?? (runConfig.expName || response.run!.id),
      config: trackedConfig({
        file,
        resolvedRun: response.config ? toJson(RunConfigMessageSchema, response.config, { useProtoFieldName: true }) : {},
        services: meshConfigs(file),
      }),
      warn: (message) => {
        progress.log(message);
        trackingLog.warn(message);
      },
    });
    const final = await followRun(client, response.run!, progress, (event) => trackers.step(event));
    await trackers.finish(final);
    const { steps, evals, runFile } = await runRecords(final.outputDir);
    const summary = runSummaryTable(final, steps, evals, {
      evalConfigured: evalData !== "",
      advice: runAdvice(final, runFile?.checkpointed !== false),
      ...(process.stdout.columns ? { width: process.stdout.columns } : {}),
    });
    process.stdout.write(`${summary}\nservice logs: ${logs.dir}\n${trackingNotes(plan.tracking, final.outputDir)}`);
    if (final.state === RunState.FAILED) process.exitCode = 1;
  } finally {
    transport.close();
    await ui?.close();
    await mesh.shutdown();
    stopper.finish();
  }
}

/** Each service's config as the mesh of `file` starts it (the orchestrator's too), or a remote one's URL. */
function meshConfigs(file: TrainFile): Record<string, unknown> {
  const options = meshOptions(file);
  const orchestrator = meshOrchestratorConfig(options);
  const services = resolveMeshServices(options, orchestrator).map(
    (s) => [s.entry.name, "remote" in s ? { url: s.remote } : s.config] as const,
  );
  return { ...Object.fromEntries(services), orchestrator };
}

/** Where the trackers' files are and how to open or upload them. */
function trackingNotes(tracking: TrackingConfig, runDir: string): string {
  const notes: string[] = [];
  if (tracking.trackers.includes("tensorboard")) notes.push(`tensorboard: tensorboard --logdir ${path.join(runDir, "tensorboard")}`);
  if (tracking.trackers.includes("wandb") && tracking.mode === "offline") {
    notes.push(`W&B offline run (upload: wandb sync DIR): ${path.join(runDir, "wandb", "offline-run-*")}`);
  }
  return notes.map((n) => `${n}\n`).join("");
}

/** The seeds' names under the options of `lean-grpo train --help`: each beside the key it sets here. */
function seedNamesHelp(): string {
  const width = Math.max(...SEED_NAMES.map((n) => n.name.length));
  const lines = SEED_NAMES.map((n) => `  ${n.name.padEnd(width)}  ${seedNameTarget(n)}   [${sourceLabel(n.seeds)}]`);
  return (
    "\nThe seeds' names and TRL's (as key=value, or in a --config file) and what they set here:\n" +
    lines.join("\n") +
    "\n  logging.enabled|project|entity|mode|name, exp_name, logging.report_to: as seed 003 and TRL name them (docs/guide/tracking.md)" +
    "\nSources, later wins: config groups < --config FILE < LEANGRPO_TRAIN_* < flags < key=value (docs/guide/configuration.md)" +
    "\nSeed 001-004 commands and what each does here: docs/guide/seeds.md\n"
  );
}

function algoConfig(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`--algo-config is not JSON (${(error as Error).message}); give an object, e.g. --algo-config '{"beta": 0}'`);
  }
}
