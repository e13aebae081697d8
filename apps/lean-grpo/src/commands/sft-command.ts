// `lean-grpo sft DATA --model DIR --out DIR`: the flags of the supervised warm start
// (sft/warm-start.ts), checked and named as typed before anything loads.
import type { Command } from "commander";
import { BACKEND_NAMES, type BackendName } from "@lean-grpo/lm";
import { warmStart, type SftSummary } from "../sft/warm-start.js";
import { tracedAction } from "../process/process-tracing.js";
import { nonNegativeInteger, positiveInteger, positiveNumber } from "./flag-values.js";

export interface SftCommandOptions {
  model: string;
  out: string;
  steps?: string;
  lr?: string;
  batch?: string;
  rank?: string;
  seed?: string;
  backend?: string;
  /** Print the loss every this many steps (0: only at the end). */
  logEvery?: string;
  /** Train every weight rather than a merged LoRA adapter. */
  full?: boolean;
}

export function registerSftCommand(program: Command): void {
  program
    .command("sft")
    .description("warm-start a model on a math JSONL (supervised), saving a merged Hugging Face model directory")
    .argument(
      "<data>",
      "JSONL: problem/answer or question/ground_truth per line, optional solution holding \\boxed{answer} or ending with the answer (default: \\boxed{answer})",
    )
    .requiredOption("--model <dir>", "Hugging Face model directory to start from (config.json, model.safetensors, tokenizer files)")
    .requiredOption("--out <dir>", "where to write the warm-started model directory")
    .option("--steps <n>", "optimizer steps", "200")
    .option("--lr <x>", "peak learning rate (linear warm-up over 5% of the steps, then cosine decay)", "2e-3")
    .option("--batch <n>", "examples per step", "32")
    .option("--rank <n>", "LoRA rank of the warm-start adapter (merged into the weights at the end)", "64")
    .option("--full", "train every weight (embedding, head, norms, linear layers) instead of a LoRA adapter; for small models")
    .option("--seed <n>", "seed of the adapter initialisation and the data order", "0")
    .option("--backend <name>", `tensor backend: auto, ${BACKEND_NAMES.join(", ")}`, "auto")
    .option("--log-every <n>", "print the loss every N steps", "25")
    .action(
      tracedAction("lean-grpo sft", async (data: string, options: SftCommandOptions) => {
        await sftCommand(data, options);
      }),
    );
}

export async function sftCommand(data: string, options: SftCommandOptions): Promise<SftSummary> {
  const backend = options.backend ?? "auto";
  if (backend !== "auto" && !(BACKEND_NAMES as readonly string[]).includes(backend)) {
    throw new Error(`--backend is ${JSON.stringify(backend)}; accepted: auto, ${BACKEND_NAMES.join(", ")}`);
  }
  return warmStart(data, {
    model: options.model,
    out: options.out,
    steps: positiveInteger("--steps", options.steps ?? "200"),
    learningRate: positiveNumber("--lr", options.lr ?? "2e-3"),
    batchSize: positiveInteger("--batch", options.batch ?? "32"),
    rank: positiveInteger("--rank", options.rank ?? "64"),
    seed: nonNegativeInteger("--seed", options.seed ?? "0"),
    logEvery: nonNegativeInteger("--log-every", options.logEvery ?? "25"),
    backend: backend as BackendName | "auto",
    full: options.full === true,
  });
}
