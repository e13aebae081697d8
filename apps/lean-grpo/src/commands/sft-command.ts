// `lean-grpo sft DATA --model DIR --out DIR`: supervised warm start of a model on
// prompt/completion pairs from a math JSONL, with the learner core in-process (the
// Learner's SFT mode: a LoRA adapter on every linear layer, AdamW), then the adapter
// merged into the base weights (W' = W + scaling·B·A) and saved as a Hugging Face model
// directory that every service loads like any other. With --full every weight trains
// instead (embedding, tied head, norms; for small models started from random weights,
// which LoRA alone cannot teach). Deterministic for a given --seed.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { readJsonObjects } from "@lean-grpo/jsonl";
import { nonNegativeInteger, positiveInteger, positiveNumber } from "./flag-values.js";
import { BACKEND_NAMES, CausalLM, expectedWeights, LINEAR_MODULES, loadCheckpoint, loraScaling, ModelTokenizer, SeededRandom, serializeSafetensors, useBackend, type BackendName, type Checkpoint, type LoraConfig, type PeftTensor } from "@lean-grpo/lm";
import { FullFineTuner, Learner, type OptimizerOptions, type TrainingExample } from "@lean-grpo/learner";

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

/** One warm-start pair: the user's question and the answer the model should write. */
export interface SftPair {
  problem: string;
  completion: string;
}

export interface SftSummary {
  steps: number;
  examples: number;
  firstLoss: number;
  lastLoss: number;
  seconds: number;
}

/** Files of the base model directory the output carries over unchanged. */
const CARRIED_FILES = ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json"];

export function registerSftCommand(program: Command): void {
  program
    .command("sft")
    .description("warm-start a model on a math JSONL (supervised), saving a merged Hugging Face model directory")
    .argument("<data>", "JSONL: problem/answer or question/ground_truth per line, optional solution holding \\boxed{answer} or ending with the answer (default: \\boxed{answer})")
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
    .action(async (data: string, options: SftCommandOptions) => {
      await sftCommand(data, options);
    });
}

/** Reads the whole file first: a bad line stops the command before any training, naming the line and field. */
export function readSftPairs(file: string): SftPair[] {
  const pairs: SftPair[] = [];
  readJsonObjects(readFileSync(file, "utf8"), file).forEach(({ line, record }) => {
    const where = `${file}:${line}`;
    const text = (key: string): string | undefined => {
      const value = record[key];
      if (value === undefined || value === null) return undefined;
      if (typeof value === "number") return String(value);
      if (typeof value !== "string") throw new Error(`${where}: "${key}" must be a string`);
      return value;
    };
    const problem = text("problem") ?? text("question");
    const answer = text("answer") ?? text("ground_truth");
    if (!problem) throw new Error(`${where}: missing "problem" (or "question"): the text the model is asked`);
    if (answer === undefined) throw new Error(`${where}: missing "answer" (or "ground_truth"): the expected final answer`);
    const solution = text("solution") ?? `\\boxed{${answer}}`;
    // Boxed or not (warm-start data in the wild is not consistent), it must end in the answer.
    if (!solution.includes(`\\boxed{${answer}}`) && !solution.trimEnd().endsWith(answer)) {
      throw new Error(`${where}: "solution" must contain \\boxed{${answer}} or end with ${answer} (the record's answer)`);
    }
    pairs.push({ problem, completion: solution });
  });
  if (pairs.length === 0) throw new Error(`${file} has no records`);
  return pairs;
}

/** The prompt as the chat template renders a one-message user turn, and the completion closed by the eos token. */
export function tokenizePair(tokenizer: ModelTokenizer, pair: SftPair): { promptIds: number[]; completionIds: number[] } {
  const eos = tokenizer.specialTokens.eos_token;
  if (eos === null) throw new Error("the tokenizer has no eos_token (tokenizer_config.json); the warm start teaches the model to end its answer with it");
  return {
    promptIds: tokenizer.encodeChat([{ role: "user", content: pair.problem }], { addGenerationPrompt: true }),
    completionIds: tokenizer.encode(pair.completion + eos, { addSpecialTokens: false }),
  };
}

/** A seeded permutation (Fisher–Yates), so the data order is the same on every run. */
function shuffled(count: number, random: SeededRandom): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** W[out, in] += scaling · B[out, r] · A[r, in], for every adapted linear of the checkpoint. */
export function mergeLora(checkpoint: Checkpoint, tensors: readonly PeftTensor[], scaling: number): void {
  const byKey = new Map(tensors.map((t) => [t.key, t]));
  for (const a of tensors) {
    if (!a.key.endsWith(".lora_A.weight")) continue;
    const b = byKey.get(a.key.replace(".lora_A.", ".lora_B."));
    const name = a.key.replace("base_model.model.", "").replace(".lora_A.weight", ".weight");
    const weight = checkpoint.weights.get(name);
    if (!b || !weight) throw new Error(`cannot merge ${a.key}: ${b ? `the model has no ${name}` : "its lora_B is missing"}`);
    const [rank, fanIn] = a.shape;
    const fanOut = b.shape[0];
    for (let o = 0; o < fanOut; o++) {
      for (let k = 0; k < rank; k++) {
        const coefficient = scaling * b.data[o * rank + k]!;
        if (coefficient === 0) continue;
        const row = o * fanIn;
        const aRow = k * fanIn;
        for (let i = 0; i < fanIn; i++) weight[row + i]! += coefficient * a.data[aRow + i]!;
      }
    }
  }
}

export async function sftCommand(data: string, options: SftCommandOptions): Promise<SftSummary> {
  const steps = positiveInteger("--steps", options.steps ?? "200");
  const learningRate = positiveNumber("--lr", options.lr ?? "2e-3");
  const batchSize = positiveInteger("--batch", options.batch ?? "32");
  const rank = positiveInteger("--rank", options.rank ?? "64");
  const seed = nonNegativeInteger("--seed", options.seed ?? "0");
  const logEvery = nonNegativeInteger("--log-every", options.logEvery ?? "25");
  const backend = options.backend ?? "auto";
  if (backend !== "auto" && !(BACKEND_NAMES as readonly string[]).includes(backend)) {
    throw new Error(`--backend is ${JSON.stringify(backend)}; accepted: auto, ${BACKEND_NAMES.join(", ")}`);
  }
  if (path.resolve(options.out) === path.resolve(options.model)) throw new Error("--out must differ from --model (the base weights are read again to merge into)");

  const pairs = readSftPairs(data);
  await useBackend(backend as BackendName | "auto");
  const tokenizer = await ModelTokenizer.load(options.model);
  const model = await CausalLM.load(options.model, { trainable: options.full === true });
  const examples: TrainingExample[] = pairs.map((pair, i) => ({
    sampleId: `${data}:${i + 1}`, groupId: `#${i}`, ...tokenizePair(tokenizer, pair), samplerLogprobs: null, reward: 0, truncated: false,
  }));
  const optimizer = {
    learningRate, maxGradNorm: 1, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0,
    schedule: { name: "cosine" as const, warmupSteps: Math.ceil(steps * 0.05), totalSteps: steps },
  };
  const trainer = options.full
    ? fullTrainer(model, optimizer)
    : loraTrainer(model, options.model, { rank, alpha: rank, targetModules: [...LINEAR_MODULES], dropout: 0, useRslora: false }, optimizer, seed);
  const random = new SeededRandom(seed);
  let order: number[] = [];
  let firstLoss = Number.NaN;
  let lastLoss = Number.NaN;
  const started = performance.now();
  try {
    for (let step = 1; step <= steps; step++) {
      const batch: TrainingExample[] = [];
      while (batch.length < batchSize) {
        if (order.length === 0) order = shuffled(examples.length, random);
        batch.push(examples[order.pop()!]!);
      }
      lastLoss = await trainer.step(batch, step);
      if (step === 1) firstLoss = lastLoss;
      if ((logEvery > 0 && step % logEvery === 0) || step === steps) {
        process.stdout.write(`${JSON.stringify({ step, loss: Number(lastLoss.toFixed(4)), seconds: Number(((performance.now() - started) / 1000).toFixed(1)) })}\n`);
      }
    }
    const checkpoint = await loadCheckpoint(options.model);
    trainer.writeInto(checkpoint);
    writeModelDirectory(options.model, options.out, checkpoint);
  } finally {
    trainer.dispose();
    model.dispose();
  }
  const summary = { steps, examples: examples.length, firstLoss, lastLoss, seconds: (performance.now() - started) / 1000 };
  writeFileSync(path.join(options.out, "sft_run.json"), JSON.stringify({
    data: path.basename(data), base: path.basename(options.model), steps, lr: learningRate, batch: batchSize,
    ...(options.full ? { full: true } : { rank }), seed, backend,
    first_loss: firstLoss, last_loss: lastLoss,
  }, null, 2) + "\n");
  process.stdout.write(`sft: ${steps} steps on ${examples.length} examples, loss ${firstLoss.toFixed(4)} -> ${lastLoss.toFixed(4)}; model written to ${options.out}\n`);
  return summary;
}

/** What the warm start trains: one update per step, then its result written into the base checkpoint. */
interface SftTrainer {
  /** One update; returns the loss per completion token. */
  step(batch: TrainingExample[], step: number): Promise<number>;
  writeInto(checkpoint: Checkpoint): void;
  dispose(): void;
}

function loraTrainer(model: CausalLM, baseModel: string, lora: LoraConfig, optimizer: OptimizerOptions, seed: number): SftTrainer {
  const learner = new Learner(model, { baseModel, lora, optimizer, microBatchTokens: 8192, seed, keepVersions: 1 });
  return {
    async step(examples, step) {
      const result = await learner.trainStep({
        algorithm: "grpo", algorithmConfig: {}, mode: "sft", examples, step, expectedSamples: 0, numGenerations: 0,
      });
      return result.metrics.loss ?? Number.NaN;
    },
    writeInto: (checkpoint) => mergeLora(checkpoint, learner.policy.peftTensors(), loraScaling(learner.lora)),
    dispose: () => learner.dispose(),
  };
}

function fullTrainer(model: CausalLM, optimizer: OptimizerOptions): SftTrainer {
  const tuner = new FullFineTuner(model, { optimizer, microBatchTokens: 8192 });
  return {
    step: async (examples) => tuner.step(examples).loss,
    writeInto(checkpoint) {
      for (const [name, data] of tuner.weights()) checkpoint.weights.set(name, data);
    },
    dispose: () => tuner.dispose(),
  };
}

/** config.json and the tokenizer files as they were, the merged weights as float32 safetensors. */
function writeModelDirectory(base: string, out: string, checkpoint: Checkpoint): void {
  mkdirSync(out, { recursive: true });
  for (const file of ["config.json", ...CARRIED_FILES]) {
    if (existsSync(path.join(base, file))) copyFileSync(path.join(base, file), path.join(out, file));
  }
  const shapes = expectedWeights(checkpoint.config);
  const tensors = [...checkpoint.weights].map(([name, data]) => ({ name, shape: shapes.get(name)!, data }));
  writeFileSync(path.join(out, "model.safetensors"), serializeSafetensors(tensors, { format: "pt" }));
}
