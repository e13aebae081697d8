// `lean-grpo train DATA`: starts every service in this process on loopback (the embedded
// default) and drives a run through OrchestratorService over gRPC, showing a progress bar
// (JSON lines when stdout is not a TTY) and a summary table at the end.
import type { Command } from "commander";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient, rpcClientTracing } from "@lean-grpo/kit";
import { ALGORITHM_NAMES } from "@lean-grpo/learner";
import { z } from "zod";
import { RunConfigMessageSchema, newRunId } from "@lean-grpo/orchestrator";
import { RunOutputs } from "@lean-grpo/orchestrator";
import { runProgress } from "./run-progress.js";
import { runSummaryTable } from "./run-summary.js";
import { runAdvice } from "./run-advice.js";
import { checkModelDir, configDir, loadTrainConfig, trainRunConfig } from "./train-config.js";
import { startRunLogs } from "./run-logs.js";
import { onStopRequest } from "../process/stop-signals.js";
import { tracedAction } from "../process/process-tracing.js";
import { startMesh } from "../mesh/start-mesh.js";
import { MeshModelSchema, reasoningKeys } from "../mesh/mesh-model.js";
import { dashboardCommand } from "./dashboard-command.js";

/**
 * The run sections of a train file (training, algorithm, reward, ...): the orchestrator owns
 * them, so here they are only composed from the sources and carried to StartRun as the typed
 * RunConfig (train-config.ts trainRunConfig); the orchestrator checks and completes them.
 */
const RUN_SECTIONS = Object.fromEntries(
  RunConfigMessageSchema.fields.filter((f) => f.name !== "dataset").map((f) => [f.name, z.unknown().optional()]),
);

/** A `--config` file of `lean-grpo train` (configs/train/*.yaml, configs/algorithm/*.yaml): the CLI's own keys, typed, and the run sections. */
export const TrainFileSchema = z
  .object({
    ...RUN_SECTIONS,
    /** The training file (else the DATA argument), plus the run's dataset keys (max_train_samples). */
    dataset: z
      .object({ path: z.string().default("") })
      .catchall(z.unknown())
      .prefault({}),
    /** The model every local service uses (mesh/mesh-model.ts: one shape for `train` and `serve all`). */
    model: MeshModelSchema,
    runs_dir: z.string().min(1).default("runs"),
    /** Per-service config sections for the embedded mesh (inference, verifier, reward, learner). */
    services: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
  })
  .strict();
export type TrainFile = z.infer<typeof TrainFileSchema>;

interface TrainOptions {
  config?: string;
  algorithm?: string;
  algoConfig?: string;
  n?: string;
  resume?: string;
  configDir?: string;
  verbose?: boolean;
  ui?: boolean | string;
}

export function registerTrainCommand(program: Command): void {
  program
    .command("train")
    .description("train on a Lean or math JSONL with every service started here on loopback")
    .argument(
      "[data]",
      "dataset JSONL (Lean: name/statement or formal_statement; math: problem/answer or question/ground_truth); or dataset=NAME / dataset.path",
    )
    .argument("[overrides...]", "config groups (model=arith-tiny algorithm=dapo dataset=arith) and dotted overrides (training.steps=50)")
    .option("-c, --config <file>", "YAML train config, e.g. configs/train/arith.yaml")
    .option("--algorithm <name>", ALGORITHM_NAMES.join(" | "))
    .option("--algo-config <json>", "algorithm knobs as JSON")
    .option("-n <steps>", "training steps")
    .option("--resume <run>", "continue a stopped or failed run from its last checkpoint")
    .option("--config-dir <dir>", "folder of the config groups model/, dataset/, algorithm/ (default ./configs, else the repo's)")
    .option("--verbose", "also print the services' JSON logs on stderr (they always go to runs/<id>/logs/)")
    .option("--ui [port]", "also serve the browser dashboard of the run (default port 8080; 0 picks a free one)")
    .action(
      tracedAction("lean-grpo train", async (dataArg: string | undefined, words: string[], options: TrainOptions) => {
        // A first word that sets something (model=x, training.steps=2) is not the dataset.
        const [data, overrides] = dataArg?.includes("=") ? [undefined, [dataArg, ...words]] : [dataArg, words];
        const flags: Record<string, unknown> = {};
        const flagNames: Record<string, string> = {};
        if (options.algorithm)
          [flags["algorithm.name"], flagNames["algorithm.name"]] = [options.algorithm, `--algorithm ${options.algorithm}`];
        if (options.algoConfig)
          [flags["algorithm.config"], flagNames["algorithm.config"]] = [algoConfig(options.algoConfig), "--algo-config"];
        if (options.n) [flags["training.steps"], flagNames["training.steps"]] = [options.n, `-n ${options.n}`];
        if (data) [flags["dataset.path"], flagNames["dataset.path"]] = [data, data];
        const file = loadTrainConfig(TrainFileSchema, {
          file: options.config,
          words: overrides,
          flags,
          flagNames,
          configDir: options.configDir,
        });
        const { model, runs_dir, services, dataset } = file;
        const runConfig = trainRunConfig(file);
        if (!dataset.path && !options.resume)
          throw new Error("no dataset: give DATA (a JSONL file), dataset=NAME (configs/dataset) or dataset.path=FILE");
        const local = (name: string) => services[name]?.url === undefined;
        if (local("inference") || local("learner")) checkModelDir(model.dir, configDir(options.configDir));
        const runId = options.resume ?? newRunId(runConfig.expName);
        const logs = startRunLogs(runs_dir, runId, { verbose: options.verbose === true });
        const mesh = await startMesh({ modelDir: model.dir, reasoning: reasoningKeys(model), services, orchestrator: { runs_dir } });
        const { client, transport } = createServiceClient(OrchestratorService, {
          endpoints: [mesh.urls.orchestrator!],
          // StartRun and WatchRun as children of the command's span; each step is a trace of its own.
          interceptors: [rpcClientTracing()],
        });
        const ui = options.ui
          ? await dashboardCommand({
              url: mesh.urls.orchestrator!,
              port: options.ui === true ? "8080" : options.ui,
              host: "127.0.0.1",
              runsDir: runs_dir,
            })
          : undefined;
        if (ui) process.stderr.write(`lean-grpo dashboard: ${ui.url}\n`);
        let started = "";
        let finished = () => {};
        const done = new Promise<void>((resolve) => (finished = resolve));
        // A stop request (signal, or the npx that started us gone) stops the run at a step
        // boundary, which checkpoints it; the run then ends as any other: summary, mesh drained.
        const release = onStopRequest(async () => {
          if (started) {
            await client.stopRun({ runId: started }).catch(() => {});
            await done;
          } else {
            transport.close();
            await mesh.shutdown();
          }
        });
        try {
          const response = await logs.whileStarting(() =>
            client.startRun(
              options.resume ? { resumeRunId: options.resume, datasetPath: dataset.path } : { runId, datasetPath: dataset.path, runConfig },
            ),
          );
          started = response.run!.id;
          let final = response.run!;
          // As the orchestrator resolved them (a resumed run: as it was started).
          const evaluation = response.config?.eval;
          const evalData = evaluation?.data ?? "";
          const every = evaluation?.every ?? 1;
          const progress = runProgress(
            {
              runId: started,
              totalSteps: Number(final.totalSteps),
              startStep: Number(final.step),
              // As the orchestrator decides it (heldout-eval.ts evaluatesAt).
              evaluatesAt: (step) => evalData !== "" && (step === 0 || step % every === 0 || step === Number(final.totalSteps)),
            },
            process.stdout.isTTY === true,
          );
          try {
            for await (const event of client.watchRun({ runId: started, fromStart: true })) {
              if (event.event.case === "step") progress.step(event.event.value);
              else if (event.event.case === "stateChange") final = event.event.value;
              else if (event.event.case === "log") progress.log(event.event.value);
            }
          } finally {
            progress.stop();
          }
          const outputs = new RunOutputs(final.outputDir);
          const [steps, evals, file] = await Promise.all([
            outputs.readSteps().catch(() => []),
            outputs.readEvals().catch(() => []),
            outputs.readRun().catch(() => undefined),
          ]);
          const summary = runSummaryTable(final, steps, evals, {
            evalConfigured: evalData !== "",
            advice: runAdvice(final, file?.checkpointed !== false),
            ...(process.stdout.columns ? { width: process.stdout.columns } : {}),
          });
          process.stdout.write(`${summary}\nservice logs: ${logs.dir}\n`);
          if (final.state === RunState.FAILED) process.exitCode = 1;
        } finally {
          release();
          transport.close();
          await ui?.close();
          await mesh.shutdown();
          finished();
        }
      }),
    );
}

function algoConfig(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`--algo-config is not JSON (${(error as Error).message}); give an object, e.g. --algo-config '{"beta": 0}'`);
  }
}
