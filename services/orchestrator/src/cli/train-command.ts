// `lean-grpo train DATA`: starts every service in this process on loopback (the embedded
// default) and drives a run through OrchestratorService over gRPC, printing one line per
// step (JSON lines when stdout is not a TTY) and a summary table at the end.
import type { Command } from "commander";
import { toJson } from "@bufbuild/protobuf";
import { OrchestratorService, RunState, StepTimingsSchema } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient, loadConfig } from "@lean-grpo/kit";
import { z } from "zod";
import { RunConfigSchema } from "../run/run-config.js";
import { RunOutputs } from "../run/run-outputs.js";
import { startMesh } from "./start-mesh.js";

/** A `--config` file of `lean-grpo train` (configs/train/*.yaml, configs/algorithms/*.yaml). */
export const TrainFileSchema = RunConfigSchema.extend({
  model: z.object({ dir: z.string().min(1).default("models/arith-tiny") }).strict().prefault({}),
  runs_dir: z.string().min(1).default("runs"),
  /** Per-service config sections for the embedded mesh (inference, verifier, reward, learner). */
  services: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
}).strict();
export type TrainFile = z.infer<typeof TrainFileSchema>;

interface TrainOptions { config?: string; algorithm?: string; algoConfig?: string; n?: string; resume?: string }

export function registerTrainCommand(program: Command): void {
  program
    .command("train")
    .description("train on a Lean or math JSONL with every service started here on loopback")
    .argument("<data>", "dataset JSONL (Lean: name/statement or formal_statement; math: problem/answer or question/ground_truth)")
    .argument("[overrides...]", "dotted overrides, e.g. training.steps=50")
    .option("-c, --config <file>", "YAML train config, e.g. configs/train/arith.yaml")
    .option("--algorithm <name>", "grpo | dgpo | drgrpo | dapo | gspo")
    .option("--algo-config <json>", "algorithm knobs as JSON")
    .option("-n <steps>", "training steps")
    .option("--resume <run>", "continue a stopped or failed run from its last checkpoint")
    .action(async (data: string, overrides: string[], options: TrainOptions) => {
      const flags: Record<string, unknown> = {};
      if (options.algorithm) flags["algorithm.name"] = options.algorithm;
      if (options.algoConfig) flags["algorithm.config"] = JSON.parse(options.algoConfig) as unknown;
      if (options.n) flags["training.steps"] = Number(options.n);
      const { model, runs_dir, services, ...run } = loadConfig(TrainFileSchema, { file: options.config, flags, overrides });
      const mesh = await startMesh({ modelDir: model.dir, services, orchestrator: { runs_dir } });
      const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
      process.once("SIGINT", () => void (started && client.stopRun({ runId: started })));
      let started = "";
      try {
        const response = await client.startRun(options.resume ? { resumeRunId: options.resume, datasetPath: data } : { datasetPath: data, config: run as never });
        started = response.run!.id;
        const tty = process.stdout.isTTY;
        let final = response.run!;
        for await (const event of client.watchRun({ runId: started, fromStart: true })) {
          if (event.event.case === "step") {
            const s = event.event.value;
            const m = s.metrics;
            process.stdout.write(tty
              ? `step ${s.step}/${final.totalSteps}  reward ${m.reward_mean?.toFixed(3)}  pass ${(100 * (m.pass_rate ?? 0)).toFixed(1)}%  loss ${m.loss?.toFixed(4) ?? "-"}  ${s.timings?.totalS.toFixed(2)}s${m.heldout_accuracy === undefined ? "" : `  held-out ${(100 * m.heldout_accuracy).toFixed(1)}%`}\n`
              : `${JSON.stringify({ run: started, step: Number(s.step), metrics: m, timings: s.timings ? toJson(StepTimingsSchema, s.timings) : {} })}\n`);
          } else if (event.event.case === "stateChange") final = event.event.value;
          else if (event.event.case === "log") process.stderr.write(`${event.event.value}\n`);
        }
        const evals = await new RunOutputs(final.outputDir).readEvals().catch(() => []);
        const heldout = evals.length > 0
          ? `heldout   ${evals.map((e) => `${(100 * e.heldout_accuracy).toFixed(1)}%@${e.step}`).join(" -> ")} (greedy, ${evals[0]!.problems} problems)\n`
          : "";
        process.stdout.write(`\nrun       ${final.id}\nstate     ${RunState[final.state]}\nsteps     ${final.step}/${final.totalSteps}\ncheckpoint ${final.lastCheckpointStep}\noutputs   ${final.outputDir}\nreport    ${final.outputDir}/report.html\n${heldout}${final.error ? `error     ${final.error}\n` : ""}`);
        if (final.state === RunState.FAILED) process.exitCode = 1;
      } finally {
        transport.close();
        await mesh.shutdown();
      }
    });
}
