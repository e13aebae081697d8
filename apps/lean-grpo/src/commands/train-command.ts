// `lean-grpo train DATA`: starts every service in this process on loopback (the embedded
// default) and drives a run through OrchestratorService over gRPC, showing a progress bar
// (JSON lines when stdout is not a TTY) and a summary table at the end.
import type { Command } from "commander";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient, loadConfig } from "@lean-grpo/kit";
import { ALGORITHM_NAMES } from "@lean-grpo/learner";
import { z } from "zod";
import { RunConfigSchema } from "@lean-grpo/orchestrator";
import { RunOutputs } from "@lean-grpo/orchestrator";
import { runProgress } from "./run-progress.js";
import { runSummaryTable } from "./run-summary.js";
import { startMesh } from "../mesh/start-mesh.js";
import { dashboardCommand } from "./dashboard-command.js";

/** A `--config` file of `lean-grpo train` (configs/train/*.yaml, configs/algorithm/*.yaml). */
export const TrainFileSchema = RunConfigSchema.extend({
  model: z
    .object({ dir: z.string().min(1).default("models/arith-tiny") })
    .strict()
    .prefault({}),
  runs_dir: z.string().min(1).default("runs"),
  /** Per-service config sections for the embedded mesh (inference, verifier, reward, learner). */
  services: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
}).strict();
export type TrainFile = z.infer<typeof TrainFileSchema>;

interface TrainOptions {
  config?: string;
  algorithm?: string;
  algoConfig?: string;
  n?: string;
  resume?: string;
  ui?: boolean | string;
}

export function registerTrainCommand(program: Command): void {
  program
    .command("train")
    .description("train on a Lean or math JSONL with every service started here on loopback")
    .argument("<data>", "dataset JSONL (Lean: name/statement or formal_statement; math: problem/answer or question/ground_truth)")
    .argument("[overrides...]", "dotted overrides, e.g. training.steps=50")
    .option("-c, --config <file>", "YAML train config, e.g. configs/train/arith.yaml")
    .option("--algorithm <name>", ALGORITHM_NAMES.join(" | "))
    .option("--algo-config <json>", "algorithm knobs as JSON")
    .option("-n <steps>", "training steps")
    .option("--resume <run>", "continue a stopped or failed run from its last checkpoint")
    .option("--ui [port]", "also serve the browser dashboard of the run (default port 8080; 0 picks a free one)")
    .action(async (data: string, overrides: string[], options: TrainOptions) => {
      const flags: Record<string, unknown> = {};
      if (options.algorithm) flags["algorithm.name"] = options.algorithm;
      if (options.algoConfig) flags["algorithm.config"] = JSON.parse(options.algoConfig) as unknown;
      if (options.n) flags["training.steps"] = Number(options.n);
      const { model, runs_dir, services, ...run } = loadConfig(TrainFileSchema, { file: options.config, flags, overrides });
      const mesh = await startMesh({ modelDir: model.dir, services, orchestrator: { runs_dir } });
      const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
      const ui = options.ui
        ? await dashboardCommand({
            url: mesh.urls.orchestrator!,
            port: options.ui === true ? "8080" : options.ui,
            host: "127.0.0.1",
            runsDir: runs_dir,
          })
        : undefined;
      if (ui) process.stderr.write(`lean-grpo dashboard: ${ui.url}\n`);
      process.once("SIGINT", () => void (started && client.stopRun({ runId: started })));
      let started = "";
      try {
        const response = await client.startRun(
          options.resume ? { resumeRunId: options.resume, datasetPath: data } : { datasetPath: data, config: run as never },
        );
        started = response.run!.id;
        let final = response.run!;
        const progress = runProgress(started, Number(final.totalSteps), Number(final.step), process.stdout.isTTY === true);
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
        const [steps, evals] = await Promise.all([outputs.readSteps().catch(() => []), outputs.readEvals().catch(() => [])]);
        process.stdout.write(`${runSummaryTable(final, steps, evals)}\n`);
        if (final.state === RunState.FAILED) process.exitCode = 1;
      } finally {
        transport.close();
        await ui?.close();
        await mesh.shutdown();
      }
    });
}
