// One TrainStep through gRPC on each learner, side by side: the TS learner (in-process, the
// embedded default) and the PyTorch learner (a child process, as `services.learner.impl: torch`
// starts it), the same random model written to disk, the same batch, the same algorithm.
// The time is the client's: stream the batch, step, answer.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { create } from "@bufbuild/protobuf";
import { LearnerService, TrainingMode, TrainStepRequestSchema } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { splitLearnerSection, startTorchLearner } from "@lean-grpo/cli";
import { deepMerge, loadConfig, serve } from "@lean-grpo/kit";
import { createLearnerService, LearnerConfigSchema } from "@lean-grpo/learner";
import { expectedWeights, parseModelConfig, SeededRandom, serializeSafetensors } from "@lean-grpo/lm";
import { blasInProcess, type LoadedBlas } from "./blas-in-process.js";

export interface GrpcStepSpec {
  config: Record<string, unknown>;
  groups: number;
  groupSize: number;
  promptTokens: number;
  completionTokens: number;
  lora: { rank: number; alpha: number; target_modules: string[] };
  warmup: number;
  steps: number;
  /** torch intra-op threads and OpenBLAS threads (1 + 2 is the best 2-core setting, torch-learner.md). */
  torchThreads: { threads: number; blas_threads: number };
}

export type GrpcStepResult =
  | {
      hiddenSize: number;
      ts: { backend: string; stepMs: number[]; medianMs: number };
      torch: { stepMs: number[]; medianMs: number; blas: LoadedBlas };
      ratio: { "ts / torch": number; misleading?: string };
    }
  | { hiddenSize: number; skipped: string }
  | { hiddenSize: number; failed: string };

async function writeModel(dir: string, config: Record<string, unknown>): Promise<void> {
  const parsed = parseModelConfig(config);
  const random = new SeededRandom(0);
  const tensors = [...expectedWeights(parsed)].map(([name, shape]) => {
    const isNorm = shape.length === 1 && !name.endsWith("bias");
    const data = Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => (isNorm ? 1 : (random.next() - 0.5) * 0.04));
    return { name, shape, data };
  });
  await writeFile(path.join(dir, "config.json"), JSON.stringify({ architectures: ["Qwen2ForCausalLM"], ...config }));
  await writeFile(path.join(dir, "model.safetensors"), serializeSafetensors(tensors));
}

function batch(spec: GrpcStepSpec, vocab: number) {
  const random = new SeededRandom(1);
  const token = () => Math.floor(random.next() * vocab);
  return Array.from({ length: spec.groups * spec.groupSize }, (_, i) => ({
    groupId: `g${Math.floor(i / spec.groupSize)}`,
    sampleId: `s${i}`,
    promptTokenIds: Array.from({ length: spec.promptTokens }, token),
    completionTokenIds: Array.from({ length: spec.completionTokens }, token),
    reward: i % 2,
  }));
}

async function timeSteps(url: string, spec: GrpcStepSpec, vocab: number): Promise<number[]> {
  const client = createClient(LearnerService, createGrpcTransport({ baseUrl: url }));
  const samples = batch(spec, vocab);
  const step = async () => {
    const messages = [
      create(TrainStepRequestSchema, { part: { case: "header", value: { algorithm: "grpo", mode: TrainingMode.RL } } }),
      ...samples.map((value) => create(TrainStepRequestSchema, { part: { case: "sample", value } })),
    ];
    const start = performance.now();
    await client.trainStep(
      (async function* () {
        yield* messages;
      })(),
    );
    return performance.now() - start;
  };
  for (let i = 0; i < spec.warmup; i++) await step();
  const times: number[] = [];
  for (let i = 0; i < spec.steps; i++) times.push(await step());
  return times;
}

export async function grpcTrainStep(spec: GrpcStepSpec, python: string, torchUnavailable: string | null): Promise<GrpcStepResult> {
  const hiddenSize = spec.config.hidden_size as number;
  if (torchUnavailable) return { hiddenSize, skipped: torchUnavailable };
  const dir = await mkdtemp(path.join(tmpdir(), "bench-learner-grpc-"));
  try {
    await writeModel(dir, spec.config);
    const section = {
      model: { dir, name: `bench-h${hiddenSize}` },
      lora: spec.lora,
      micro_batch_tokens: spec.groups * spec.groupSize * (spec.promptTokens + spec.completionTokens),
      checkpoint_dir: path.join(dir, "checkpoints"),
      server: { host: "127.0.0.1", port: 0, shutdown: { drain_delay_ms: 0 } },
    };
    const vocab = spec.config.vocab_size as number;
    const tsConfig = loadConfig(LearnerConfigSchema, { flags: deepMerge(section, { backend: "wasm" }) });
    const ts = await serve({ name: "learner", services: [createLearnerService(tsConfig)], config: tsConfig.server });
    let tsTimes: number[];
    try {
      tsTimes = await timeSteps(ts.url, spec, vocab);
    } finally {
      await ts.shutdown();
    }
    const { torch } = splitLearnerSection("learner", { impl: "torch", python, torch: { device: "cpu", ...spec.torchThreads } });
    const learner = await startTorchLearner(loadConfig(LearnerConfigSchema, { flags: section }), torch!);
    let torchTimes: number[];
    let blas: LoadedBlas;
    try {
      torchTimes = await timeSteps(learner.url, spec, vocab);
      blas = blasInProcess(learner.pid); // after the steps: torch loads BLAS lazily
    } finally {
      await learner.shutdown();
    }
    const tsMedian = median(tsTimes);
    const torchMedian = median(torchTimes);
    return {
      hiddenSize,
      ts: { backend: "wasm", stepMs: tsTimes.map(round), medianMs: tsMedian },
      torch: { stepMs: torchTimes.map(round), medianMs: torchMedian, blas },
      ratio: { "ts / torch": round(tsMedian / torchMedian), ...(blas.warning ? { misleading: blas.warning } : {}) },
    };
  } catch (error) {
    return { hiddenSize, failed: (error as Error).message.split("\n").slice(0, 6).join(" | ") };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.floor((sorted.length - 1) / 2)]!);
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
