// bench/learner: one LoRA training step (forward, backward, Adam) of the fixed model of
// learner-facts §2 on the tfjs cpu and wasm backends, and the same step in PyTorch
// (bench/learner/torch_step.py, Debian python3-torch) when /usr/bin/python3 has torch,
// side by side with the ratio; one TrainStep through gRPC on each learner service (TS and
// PyTorch, grpc-train-step.ts) at two model widths, with the BLAS the PyTorch one loaded;
// then decoding tokens/s with and without the KV cache.
// Prints JSON. Usage:
//   npx tsx bench/learner/main.ts [--backends wasm,cpu] [--steps 3] [--cpu-steps 1] [--decode-tokens 32]
//                                 [--grpc-widths 128,256] [--grpc-steps 2]
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as tf from "@tensorflow/tfjs-core";
import {
  CausalLM,
  completionLogprobs,
  expectedWeights,
  generate,
  LoraAdapter,
  lossGradients,
  parseModelConfig,
  SeededRandom,
  useBackend,
  type BackendName,
  type LinearModule,
} from "@lean-grpo/lm";
import { grpcTrainStep } from "./grpc-train-step.js";

const { values: args } = parseArgs({
  options: {
    backends: { type: "string", default: "wasm,cpu" },
    steps: { type: "string", default: "3" },
    "cpu-steps": { type: "string", default: "1" },
    "decode-tokens": { type: "string", default: "32" },
    "grpc-widths": { type: "string", default: "128,256" },
    "grpc-steps": { type: "string", default: "2" },
  },
});

// learner-facts §2: 4 layers, hidden 256, 4 q / 2 kv heads (head_dim 64), intermediate 1024,
// vocab 2048, tied head, q/k/v bias; batch 8 × 128 tokens; LoRA r 16 on q/k/v/o.
const CONFIG = {
  model_type: "qwen2",
  hidden_size: 256,
  intermediate_size: 1024,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  vocab_size: 2048,
  rms_norm_eps: 1e-6,
  rope_theta: 1e6,
  tie_word_embeddings: true,
  max_position_embeddings: 4096,
  torch_dtype: "float32",
};
const BATCH = 8;
const PROMPT_TOKENS = 32;
const COMPLETION_TOKENS = 96; // 128 tokens per sequence, logprobs for the last 96
const LORA = {
  rank: 16,
  alpha: 32,
  targetModules: ["q_proj", "k_proj", "v_proj", "o_proj"] as LinearModule[],
  dropout: 0,
  useRslora: false,
};

/** The fixed model with random weights (timing does not depend on the values). */
function randomModel(): CausalLM {
  const config = parseModelConfig(CONFIG);
  const random = new SeededRandom(0);
  const weights = new Map<string, Float32Array>();
  for (const [name, shape] of expectedWeights(config)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const isNorm = shape.length === 1 && !name.endsWith("bias");
    for (let i = 0; i < data.length; i++) data[i] = isNorm ? 1 : (random.next() - 0.5) * 0.04;
    weights.set(name, data);
  }
  return CausalLM.fromCheckpoint({ config, weights });
}

function batchOfSequences(): { sequences: Array<{ promptIds: number[]; completionIds: number[] }>; advantages: number[] } {
  const random = new SeededRandom(1);
  const token = () => Math.floor(random.next() * CONFIG.vocab_size);
  return {
    sequences: Array.from({ length: BATCH }, () => ({
      promptIds: Array.from({ length: PROMPT_TOKENS }, token),
      completionIds: Array.from({ length: COMPLETION_TOKENS }, token),
    })),
    advantages: Array.from({ length: BATCH }, () => random.next() * 2 - 1),
  };
}

async function tfjsTrainStep(backend: BackendName, warmup: number, steps: number) {
  await useBackend(backend);
  const model = randomModel();
  const adapter = LoraAdapter.create(model.config, LORA, 0);
  const optimizer = tf.train.adam(1e-4);
  const { sequences, advantages } = batchOfSequences();
  const advantage = tf.tensor2d(advantages, [BATCH, 1]);
  const step = async () => {
    const { value, grads } = lossGradients(() => {
      const { logprobs } = completionLogprobs(model, sequences, { adapter });
      return tf.neg(tf.mean(tf.mul(advantage, logprobs))) as tf.Scalar;
    }, adapter.variables());
    optimizer.applyGradients(Object.entries(grads).map(([name, tensor]) => ({ name, tensor })));
    await value.data(); // wait for the backend to finish the step
    tf.dispose([value, ...Object.values(grads)]);
  };
  for (let i = 0; i < warmup; i++) await step();
  const tensorsBefore = tf.memory().numTensors;
  const stepMs: number[] = [];
  for (let i = 0; i < steps; i++) {
    const start = performance.now();
    await step();
    stepMs.push(performance.now() - start);
  }
  const leaked = tf.memory().numTensors - tensorsBefore;
  tf.dispose(advantage);
  optimizer.dispose();
  adapter.dispose();
  model.dispose();
  return { backend, stepMs: stepMs.map(round), medianMs: median(stepMs), tensorsLeakedPerRun: leaked };
}

type TorchResult =
  | { blasThreads: number; torch: string; blas: string; stepMs: number[]; medianMs: number }
  | { skipped: string }
  | { failed: string };

/** The PyTorch step with one torch thread and `threads` OpenBLAS threads. */
function torchTrainStep(threads: number, warmup: number, steps: number): TorchResult {
  const python = "/usr/bin/python3";
  if (!existsSync(python) || spawnSync(python, ["-c", "import torch"]).status !== 0) {
    return { skipped: "/usr/bin/python3 has no torch (apt-get install python3-torch libopenblas0-pthread)" };
  }
  const spec = {
    config: CONFIG,
    batch: BATCH,
    prompt_tokens: PROMPT_TOKENS,
    completion_tokens: COMPLETION_TOKENS,
    rank: LORA.rank,
    alpha: LORA.alpha,
    targets: LORA.targetModules,
    threads,
    warmup_steps: warmup,
    steps,
  };
  const script = fileURLToPath(new URL("torch_step.py", import.meta.url));
  const run = spawnSync(python, [script, JSON.stringify(spec)], {
    encoding: "utf8",
    env: { ...process.env, OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: "1" },
  });
  if (run.status !== 0) return { failed: run.stderr.trim().split("\n").slice(-3).join(" | ") };
  const result = JSON.parse(run.stdout.trim().split("\n").pop()!) as { step_ms: number[]; blas: string; torch: string };
  return {
    blasThreads: threads,
    torch: result.torch,
    blas: result.blas,
    stepMs: result.step_ms.map(round),
    medianMs: median(result.step_ms),
  };
}

async function decodeThroughput(newTokens: number) {
  await useBackend("wasm");
  const model = randomModel();
  const random = new SeededRandom(2);
  const prompts = Array.from({ length: 4 }, () =>
    Array.from({ length: PROMPT_TOKENS }, () => Math.floor(random.next() * CONFIG.vocab_size)),
  );
  const options = { maxNewTokens: newTokens, temperature: 0, stopTokenIds: [] as number[] };
  await generate(model, prompts, { ...options, maxNewTokens: 2 }); // warm up
  const measure = async (useKvCache: boolean) => {
    const start = performance.now();
    const out = await generate(model, prompts, { ...options, useKvCache });
    const seconds = (performance.now() - start) / 1000;
    const tokens = out.reduce((n, s) => n + s.tokenIds.length, 0);
    return { tokensPerSecond: tokens / seconds, ids: out.map((s) => s.tokenIds) };
  };
  const cached = await measure(true);
  const recomputed = await measure(false);
  model.dispose();
  return {
    backend: "wasm",
    batch: prompts.length,
    promptTokens: PROMPT_TOKENS,
    newTokensPerSequence: newTokens,
    kvCacheTokensPerSecond: round(cached.tokensPerSecond),
    recomputeTokensPerSecond: round(recomputed.tokensPerSecond),
    speedup: round(cached.tokensPerSecond / recomputed.tokensPerSecond),
    sameTokens: JSON.stringify(cached.ids) === JSON.stringify(recomputed.ids),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.floor((sorted.length - 1) / 2)]!);
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

const steps = Number(args.steps);
const backends = args.backends!.split(",") as BackendName[];
const tfjs: Record<string, Awaited<ReturnType<typeof tfjsTrainStep>>> = {};
for (const backend of backends) {
  // wasm needs a couple of steps before its heap stops growing; a pure-JS cpu step takes ~25 s.
  tfjs[backend] = await tfjsTrainStep(backend, backend === "cpu" ? 1 : 2, backend === "cpu" ? Number(args["cpu-steps"]) : steps);
}
const torchOneThread = torchTrainStep(1, 1, steps);
const torchTwoThreads = torchTrainStep(2, 1, steps);
const grpcPython = "/usr/bin/python3";
const grpcUnavailable =
  spawnSync(grpcPython, ["-c", "import torch, grpc, google.protobuf"]).status === 0
    ? null
    : `${grpcPython} lacks torch, grpcio or protobuf (apt-get install python3-torch python3-grpcio python3-protobuf libopenblas0-pthread)`;
const grpcSteps = [];
for (const width of args["grpc-widths"]!.split(",").map(Number)) {
  // The bench model at this width: head_dim 64 (width / 64 query heads, half as many kv heads), MLP 4x.
  const heads = Math.max(1, width / 64);
  grpcSteps.push(
    await grpcTrainStep(
      {
        config: {
          ...CONFIG,
          hidden_size: width,
          intermediate_size: 4 * width,
          num_attention_heads: heads,
          num_key_value_heads: Math.max(1, heads / 2),
        },
        groups: 2,
        groupSize: BATCH / 2,
        promptTokens: PROMPT_TOKENS,
        completionTokens: COMPLETION_TOKENS,
        lora: { rank: LORA.rank, alpha: LORA.alpha, target_modules: LORA.targetModules },
        warmup: 1,
        steps: Number(args["grpc-steps"]),
        torchThreads: { threads: 1, blas_threads: 2 },
      },
      grpcPython,
      grpcUnavailable,
    ),
  );
}
const ratios: Record<string, number> = {};
for (const [name, result] of Object.entries(tfjs)) {
  if ("medianMs" in torchOneThread) ratios[`tfjs-${name} / torch-1-thread`] = round(result.medianMs / torchOneThread.medianMs);
  if ("medianMs" in torchTwoThreads) ratios[`tfjs-${name} / torch-2-threads`] = round(result.medianMs / torchTwoThreads.medianMs);
}
console.log(
  JSON.stringify(
    {
      model: { ...CONFIG, lora: LORA },
      batch: BATCH,
      tokensPerSequence: PROMPT_TOKENS + COMPLETION_TOKENS,
      completionTokensScored: COMPLETION_TOKENS,
      trainStep: {
        tfjs,
        torch: { oneThread: torchOneThread, twoThreads: torchTwoThreads },
        ratios,
        goal: "tfjs-wasm / torch-1-thread <= 4",
      },
      // The two learner services over gRPC (grpo, 8 × 128 tokens): TS (tfjs-wasm) vs PyTorch (1 torch + 2 OpenBLAS threads).
      grpcTrainStep: grpcSteps,
      decode: await decodeThroughput(Number(args["decode-tokens"])),
    },
    null,
    2,
  ),
);
