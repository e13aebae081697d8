// The supervised warm start behind `lean-grpo sft`: the learner's SFT mode on prompt/answer
// pairs (a LoRA adapter on every linear layer, merged into the weights at the end), or every
// weight with FullFineTuner (`full`), then a Hugging Face model directory that every service
// loads like any other. Deterministic for a given seed.
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { FullFineTuner, Learner, type OptimizerOptions, type TrainingExample } from "@lean-grpo/learner";
import {
  CausalLM,
  expectedWeights,
  LINEAR_MODULES,
  loadCheckpoint,
  loraScaling,
  mergeLora,
  ModelTokenizer,
  SeededRandom,
  serializeSafetensors,
  useBackend,
  type BackendName,
  type Checkpoint,
  type LoraConfig,
} from "@lean-grpo/lm";
import { PROMPT_FORMAT_FILE, promptFormatJson, readModelPromptFormat } from "@lean-grpo/lm/tokenizer";
import { readSftPairs, SFT_DEFAULT_FORMAT, tokenizePair } from "./sft-data.js";

export interface WarmStartSettings {
  /** Base model directory (config.json, model.safetensors, tokenizer files). */
  model: string;
  /** Where the warm-started model directory goes. */
  out: string;
  steps: number;
  learningRate: number;
  batchSize: number;
  /** LoRA rank (ignored with `full`). */
  rank: number;
  seed: number;
  backend: BackendName | "auto";
  /** Print the loss every this many steps (0: only at the end). */
  logEvery: number;
  /** Train every weight rather than a merged LoRA adapter. */
  full: boolean;
}

export interface SftSummary {
  steps: number;
  examples: number;
  firstLoss: number;
  lastLoss: number;
  seconds: number;
}

/** Files of the base model directory the output carries over unchanged. */
const CARRIED_FILES = ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "chat_template.json", "generation_config.json"];

export async function warmStart(data: string, settings: WarmStartSettings): Promise<SftSummary> {
  const { steps, learningRate, batchSize, rank, seed, logEvery, backend } = settings;
  if (path.resolve(settings.out) === path.resolve(settings.model))
    throw new Error("--out must differ from --model (the base weights are read again to merge into)");
  const pairs = await readSftPairs(data);
  await useBackend(backend);
  const tokenizer = await ModelTokenizer.load(settings.model);
  // The base model's own prompt format, which the warm-started model keeps (its prompt_format.json).
  const format = { ...SFT_DEFAULT_FORMAT, ...readModelPromptFormat(settings.model) };
  const model = await CausalLM.load(settings.model, { trainable: settings.full });
  const examples: TrainingExample[] = pairs.map((pair, i) => ({
    sampleId: `${data}:${i + 1}`,
    groupId: `#${i}`,
    ...tokenizePair(tokenizer, pair, format),
    samplerLogprobs: null,
    reward: 0,
    truncated: false,
  }));
  const optimizer = {
    learningRate,
    maxGradNorm: 1,
    beta1: 0.9,
    beta2: 0.999,
    epsilon: 1e-8,
    weightDecay: 0,
    schedule: { name: "cosine" as const, warmupSteps: Math.ceil(steps * 0.05), totalSteps: steps },
  };
  const trainer = settings.full
    ? fullTrainer(model, optimizer)
    : loraTrainer(
        model,
        settings.model,
        { rank, alpha: rank, targetModules: [...LINEAR_MODULES], dropout: 0, useRslora: false },
        optimizer,
        seed,
      );
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
        process.stdout.write(
          `${JSON.stringify({ step, loss: Number(lastLoss.toFixed(4)), seconds: Number(((performance.now() - started) / 1000).toFixed(1)) })}\n`,
        );
      }
    }
    const checkpoint = await loadCheckpoint(settings.model);
    trainer.writeInto(checkpoint);
    writeModelDirectory(settings.model, settings.out, checkpoint);
    // The prompt it was trained to read travels with it: every command that names it samples with it.
    writeFileSync(path.join(settings.out, PROMPT_FORMAT_FILE), promptFormatJson(format));
  } finally {
    trainer.dispose();
    model.dispose();
  }
  const summary = { steps, examples: examples.length, firstLoss, lastLoss, seconds: (performance.now() - started) / 1000 };
  writeFileSync(
    path.join(settings.out, "sft_run.json"),
    `${JSON.stringify(
      {
        data: path.basename(data),
        base: path.basename(settings.model),
        steps,
        lr: learningRate,
        batch: batchSize,
        ...(settings.full ? { full: true } : { rank }),
        seed,
        backend,
        first_loss: firstLoss,
        last_loss: lastLoss,
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write(
    `sft: ${steps} steps on ${examples.length} examples, loss ${firstLoss.toFixed(4)} -> ${lastLoss.toFixed(4)}; model written to ${settings.out}\n`,
  );
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
        algorithm: "grpo",
        algorithmConfig: {},
        mode: "sft",
        examples,
        step,
        expectedSamples: 0,
        numGenerations: 0,
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

/** A seeded permutation (Fisher–Yates), so the data order is the same on every run. */
function shuffled(count: number, random: SeededRandom): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}
