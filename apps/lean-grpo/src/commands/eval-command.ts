// `lean-grpo eval DATA --k K [--run RUN | --adapter DIR | --checkpoint DIR] [--url URL]`: pass@1
// and pass@k on a held-out file (greedy when one sample per problem), computed by the
// orchestrator's Evaluate: a running one (`--url`), else the embedded mesh started here.
import type { Command } from "commander";
import { nonNegativeInteger, nonNegativeNumber, positiveInteger } from "./flag-values.js";
import { loadConfig } from "@lean-grpo/kit";
import { applyModelPrompt } from "../config/model-prompt.js";
import { evaluateThroughOrchestrator } from "../eval/evaluate-through-orchestrator.js";
import { TrainFileSchema } from "./train-file.js";
import { trainRunConfig } from "./train-config.js";
import { tracedAction } from "../process/process-tracing.js";

interface EvalCommandOptions {
  k: string;
  samples?: string;
  temperature?: string;
  maxTokens?: string;
  run?: string;
  adapter?: string;
  checkpoint?: string;
  url?: string;
  runsDir: string;
  model?: string;
  config?: string;
  seed: string;
  json?: boolean;
}

export function registerEvalCommand(program: Command): void {
  program
    .command("eval")
    .description("pass@1 and pass@k (unbiased estimator) on a held-out JSONL with a run's latest adapter, a PEFT adapter or the base model")
    .argument("<data>", "held-out dataset JSONL, e.g. examples/arith-heldout.jsonl")
    .option("--k <k>", "the k of pass@k", "1")
    .option("--samples <n>", "completions per problem (≥ k; default k; 1 samples greedily)")
    .option("--temperature <t>", "sampling temperature when samples > 1", "1")
    .option("--max-tokens <n>", "completion length (default: the run's max_tokens, else 64)")
    .option("--run <id>", "evaluate this run's latest adapter with its prompt settings")
    .option("--adapter <dir>", "evaluate this PEFT adapter directory")
    .option("--checkpoint <dir>", "evaluate this learner checkpoint's adapter, e.g. runs/ID/checkpoints/step-10")
    .option(
      "--url <url>",
      "a running orchestrator (`serve all`), e.g. http://127.0.0.1:50055; paths are on its filesystem (default: start the mesh here)",
    )
    .option("--runs-dir <dir>", "where runs live (the mesh started here)", "runs")
    .option("--model <dir>", "base model directory (default: the config's model.dir, else models/arith-tiny)")
    .option("-c, --config <file>", "train config (configs/train/*.yaml) whose model, prompt, max_tokens and services to use")
    .option("--seed <n>", "sampling seed", "0")
    .option("--json", "print the report as JSON (default when stdout is not a TTY)")
    .action(
      tracedAction("lean-grpo eval", async (data: string, options: EvalCommandOptions) => {
        const k = positiveInteger("--k", options.k);
        const temperature = nonNegativeNumber("--temperature", options.temperature ?? "1");
        const train = options.config ? loadConfig(TrainFileSchema, { file: options.config }) : undefined;
        const modelDir = options.model ?? train?.model.dir ?? "models/arith-tiny";
        // The model's own prompt for every prompt key the config leaves unset (a run's own config decides for --run;
        // a running orchestrator's model is on its machine).
        const runConfig = trainRunConfig(train ?? loadConfig(TrainFileSchema, {}));
        if (options.run === undefined && options.url === undefined) {
          const { warning } = applyModelPrompt(runConfig, modelDir);
          if (warning) process.stderr.write(`lean-grpo: warning: ${warning}\n`);
        }
        const report = await evaluateThroughOrchestrator({
          data,
          k,
          samples: options.samples === undefined ? k : positiveInteger("--samples", options.samples),
          temperature,
          ...(options.maxTokens !== undefined ? { maxTokens: positiveInteger("--max-tokens", options.maxTokens) } : {}),
          ...(options.run !== undefined ? { run: options.run } : {}),
          ...(options.adapter !== undefined ? { adapter: options.adapter } : {}),
          ...(options.checkpoint !== undefined ? { checkpoint: options.checkpoint } : {}),
          ...(options.url !== undefined ? { url: options.url } : {}),
          runsDir: options.runsDir,
          modelDir,
          runConfig,
          ...(train ? { services: train.services } : {}),
          seed: nonNegativeInteger("--seed", options.seed),
        });
        if (options.json || !process.stdout.isTTY) {
          process.stdout.write(`${JSON.stringify(report)}\n`);
          return;
        }
        const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
        process.stdout.write(
          `evaluated  ${report.evaluated}\nproblems   ${report.problems}\nsamples    ${report.samples}${report.greedy ? " (greedy)" : ""}\npass@1     ${pct(report.pass_at_1)}\n${
            // pass@1 is already above; a second line only for a larger k.
            report.k > 1 ? `pass@${report.k}${" ".repeat(Math.max(1, 6 - String(report.k).length))}${pct(report.pass_at_k)}\n` : ""
          }`,
        );
      }),
    );
}
