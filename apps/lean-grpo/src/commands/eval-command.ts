// `lean-grpo eval DATA --k 1,8,32 --samples N [--top-p P --top-k K] [--out FILE]
// [--run RUN | --adapter DIR | --checkpoint DIR] [--url URL]`: pass@k for several k from the
// same N samples per problem (greedy when one sample per problem), computed by the
// orchestrator's Evaluate: a running one (`--url`), else the embedded mesh started here.
// `--out` keeps every completion with its verdict (eval/completions-file.ts).
import type { Command } from "commander";
import { nonNegativeInteger, nonNegativeNumber, positiveInteger, positiveIntegerList, unitInterval } from "./flag-values.js";
import { loadConfig } from "@lean-grpo/kit";
import { applyModelPrompt } from "../config/model-prompt.js";
import { CompletionsFile } from "../eval/completions-file.js";
import { type EvalResult, evaluateThroughOrchestrator } from "../eval/evaluate-through-orchestrator.js";
import { TrainFileSchema } from "./train-file.js";
import { trainRunConfig } from "./train-config.js";
import { tracedAction } from "../process/process-tracing.js";

interface EvalCommandOptions {
  k: string;
  samples?: string;
  temperature?: string;
  topP?: string;
  topK?: string;
  out?: string;
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
    .description(
      "pass@k (unbiased estimator) for one or several k on a held-out JSONL with a run's latest adapter, a PEFT adapter or the base model",
    )
    .argument("<data>", "held-out dataset JSONL, e.g. examples/arith-heldout.jsonl")
    .option("--k <k>", "the k of pass@k, or several separated by commas, e.g. 1,8,32", "1")
    .option("--samples <n>", "completions per problem, ≥ every k (default: the largest k; 1 samples greedily)")
    .option("--temperature <t>", "sampling temperature when samples > 1", "1")
    .option("--top-p <p>", "nucleus sampling when samples > 1: keep the most likely tokens up to this probability, in (0, 1]")
    .option("--top-k <n>", "sample among the n most likely tokens when samples > 1 (0: all)")
    .option("--out <file>", "write every completion with its verdict and first Lean error (or math check), one JSON line per problem")
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
        const ks = positiveIntegerList("--k", options.k);
        const samples = options.samples === undefined ? Math.max(...ks) : positiveInteger("--samples", options.samples);
        const tooLarge = ks.find((k) => k > samples);
        if (tooLarge !== undefined)
          throw new Error(
            `--k ${tooLarge} is larger than --samples ${samples}: pass@k needs at least k completions per problem; give --samples ${tooLarge} or more`,
          );
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
        const out = options.out === undefined ? undefined : await CompletionsFile.create(options.out);
        let report: EvalResult;
        try {
          report = await evaluateThroughOrchestrator({
            data,
            ks,
            samples,
            temperature,
            ...(options.topP !== undefined ? { topP: unitInterval("--top-p", options.topP) } : {}),
            ...(options.topK !== undefined ? { topK: nonNegativeInteger("--top-k", options.topK) } : {}),
            ...(out ? { onProblem: (problem) => out.write(problem) } : {}),
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
        } finally {
          await out?.close();
        }
        if (options.json || !process.stdout.isTTY) {
          process.stdout.write(`${JSON.stringify(report)}\n`);
          return;
        }
        process.stdout.write(evalReportText(report, out?.path));
      }),
    );
}

/** The report as a person reads it: one line per k. */
export function evalReportText(report: EvalResult, outPath?: string): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const lines = [
    `evaluated  ${report.evaluated}`,
    `problems   ${report.problems}`,
    `samples    ${report.samples}${report.greedy ? " (greedy)" : ""}`,
    ...report.pass_at.map(({ k, value }) => `${`pass@${k}`.padEnd(10)} ${pct(value)}`),
    ...(outPath ? [`completions ${outPath}`] : []),
  ];
  return `${lines.join("\n")}\n`;
}
