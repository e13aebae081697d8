// bench/learner/embedded-step: the README main command's training step on the tfjs learner,
// at its real shapes, before and after issue 26, in one run. The model is models/arith-tiny
// on wasm with arith.yaml's LoRA (r 16 on all seven projections, lr 1e-3); the batch is one
// step's rollouts sampled from that model (16 problems of examples/arith.jsonl × 8, T 1,
// max_tokens 32, the chat prompt), rewarded by the boxed answer, sent as an async run sends
// them (grpo, β 0.04, token-level truncated importance sampling with cap 2 against the
// sampler logprobs).
//   baseline: formerStep, the step as it was: reference pass, old-policy pass, then the
//             differentiated pass, in micro-batches cut in arrival order (one, here);
//   current:  the old-policy logprobs are the detached ones of the differentiated pass, and
//             rows are cut into micro-batches by length (less padding), on one thread;
//   threads:  the same step with a gradient thread beside the learner's (services.learner.threads 2,
//             the default on 2 cores): micro-batches computed in parallel, the same numbers bit for bit.
// Both learners start from the same seed and take the same batches, alternating which goes
// first, so their losses and gradient norms must agree step by step (printed as max |Δ|).
// Prints JSON. Usage: npx tsx bench/learner/embedded-step.ts [--steps 6] [--backend wasm]
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { CausalLM, generate, ModelTokenizer, useBackend, type BackendName } from "@lean-grpo/lm";
import { Learner, microBatches, type LearnerOptions, type StepRequest, type TrainingExample } from "@lean-grpo/learner";
import { ASYNC_IMPORTANCE_SAMPLING_CAP, ASYNC_IMPORTANCE_SAMPLING_MODE } from "@lean-grpo/orchestrator";
import { percentile } from "../support/percentile.js";

const { values: args } = parseArgs({
  options: {
    steps: { type: "string", default: "6" },
    backend: { type: "string", default: "wasm" },
  },
});
const steps = Number(args.steps);
const root = (file: string) => fileURLToPath(new URL(`../../${file}`, import.meta.url));
const MODEL_DIR = root("models/arith-tiny");
const GROUPS = 16;
const GENERATIONS = 8;
const MAX_TOKENS = 32;

const backend = await useBackend(args.backend as BackendName);
const model = await CausalLM.load(MODEL_DIR);
const tokenizer = await ModelTokenizer.load(MODEL_DIR);
const problems = readFileSync(root("examples/arith.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as { problem: string; answer: string });

/** Step k's rollouts: GROUPS problems from k·GROUPS on, GENERATIONS each, from the base model. */
async function rollouts(k: number): Promise<TrainingExample[]> {
  const examples: TrainingExample[] = [];
  for (let g = 0; g < GROUPS; g++) {
    const { problem, answer } = problems[(k * GROUPS + g) % problems.length]!;
    const promptIds = tokenizer.encodeChat([{ role: "user", content: problem }], { addGenerationPrompt: true });
    const sequences = await generate(model, Array(GENERATIONS).fill(promptIds), {
      maxNewTokens: MAX_TOKENS,
      temperature: 1,
      topK: 0,
      topP: 1,
      seed: 1000 * k + g,
    });
    sequences.forEach((s, i) => {
      const boxed = /\\boxed\{([^}]*)\}/.exec(tokenizer.decode(s.tokenIds, { skipSpecialTokens: true }))?.[1];
      examples.push({
        sampleId: `${k}-${g}-${i}`,
        groupId: `${k}-${g}`,
        promptIds,
        completionIds: s.tokenIds,
        samplerLogprobs: s.logprobs,
        reward: boxed?.trim() === answer ? 1 : 0,
        truncated: s.finishReason === "length",
      });
    });
  }
  return examples;
}

// arith.yaml's learner section over the learner service's defaults (config.ts).
const options = (formerStep: boolean, threads = 1): LearnerOptions => ({
  baseModel: MODEL_DIR,
  lora: {
    rank: 16,
    alpha: 32,
    targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    dropout: 0,
    useRslora: false,
  },
  optimizer: {
    learningRate: 1e-3,
    beta1: 0.9,
    beta2: 0.999,
    epsilon: 1e-8,
    weightDecay: 0,
    maxGradNorm: 1,
    schedule: { name: "constant", warmupSteps: 0, totalSteps: 0 },
  },
  // The former step ran with the service's default budget; arith.yaml now sets 1,024.
  microBatchTokens: formerStep ? 8192 : 1024,
  seed: 0,
  keepVersions: 2,
  formerStep,
  threads,
  modelDir: MODEL_DIR,
});

const request = (examples: TrainingExample[]): StepRequest => ({
  algorithm: "grpo",
  algorithmConfig: { ...ASYNC_IMPORTANCE_SAMPLING_MODE, importance_sampling_cap: ASYNC_IMPORTANCE_SAMPLING_CAP },
  mode: "rl",
  examples,
  step: 0,
  expectedSamples: GROUPS * GENERATIONS,
  numGenerations: GENERATIONS,
  sampling: { temperature: 1, topK: 0, topP: 1 },
});

const learners = {
  baseline: new Learner(model, options(true)),
  current: new Learner(model, options(false)),
  threads: new Learner(model, options(false, 2)),
};
const seconds: Record<keyof typeof learners, number[]> = { baseline: [], current: [], threads: [] };
// Gradient-free passes over the whole batch (reference, old policy) per step, counted at their entry
// (scoreInChunks); the current step scores the reference inside each micro-batch instead.
const scoringPasses = { baseline: 0, current: 0, threads: 0 };
for (const name of ["baseline", "current", "threads"] as const) {
  const learner = learners[name];
  const score = learner.scoreInChunks.bind(learner);
  learner.scoreInChunks = (...call) => {
    scoringPasses[name] += 1;
    return score(...call);
  };
}
let maxLossDifference = 0;
let maxGradNormDifference = 0;
// The threaded step must equal the one-thread step exactly.
let maxThreadsDifference = 0;
const batches: { rows: number; tokens: number; paddedTokens: Record<string, number>; microBatches: Record<string, number> }[] = [];
// One untimed warm-up step each (the wasm heap grows, kernels are first run).
for (let k = 0; k <= steps; k++) {
  const examples = await rollouts(k);
  const lengths = examples.map((e) => e.promptIds.length + e.completionIds.length);
  // Padded tokens of the micro-batches each learner cuts (the former: 8192-token budget, one in arrival order; now 1,024 by length).
  const cut = microBatches(
    examples.map((example, index) => ({ example, index, advantage: 0, live: true })),
    1024,
    { keepGroups: false },
  );
  const batch = {
    rows: examples.length,
    tokens: lengths.reduce((a, b) => a + b, 0),
    paddedTokens: {
      baseline: examples.length * Math.max(...lengths),
      current: cut.reduce(
        (n, rows) => n + rows.length * Math.max(...rows.map((r) => r.example.promptIds.length + r.example.completionIds.length)),
        0,
      ),
    },
    microBatches: {} as Record<string, number>,
  };
  batches.push(batch);
  const order = k % 2 === 0 ? (["baseline", "current", "threads"] as const) : (["threads", "current", "baseline"] as const);
  const metrics: Record<string, Record<string, number>> = {};
  for (const name of order) {
    const t0 = performance.now();
    metrics[name] = (await learners[name].trainStep(request(examples))).metrics;
    if (k > 0) seconds[name].push((performance.now() - t0) / 1000);
    batch.microBatches[name] = metrics[name]!.micro_batches!;
  }
  maxLossDifference = Math.max(maxLossDifference, Math.abs(metrics.baseline!.loss! - metrics.current!.loss!));
  maxGradNormDifference = Math.max(maxGradNormDifference, Math.abs(metrics.baseline!.grad_norm! - metrics.current!.grad_norm!));
  for (const key of ["loss", "grad_norm", "kl", "entropy"])
    maxThreadsDifference = Math.max(maxThreadsDifference, Math.abs(metrics.threads![key]! - metrics.current![key]!));
}

const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const baseline = median(seconds.baseline);
const current = median(seconds.current);
const threaded = median(seconds.threads);
console.log(
  JSON.stringify(
    {
      benchmark: "learner/embedded-step",
      model: "models/arith-tiny (Qwen2, 4 layers, hidden 128), LoRA r 16 on all seven projections",
      backend: backend.name,
      batch: `${GROUPS} × ${GENERATIONS} rollouts of the base model, max_tokens ${MAX_TOKENS}; grpo with the async run's truncated importance sampling`,
      timedSteps: steps,
      batches: batches.slice(1),
      baseline: {
        what: "formerStep: reference, old-policy and differentiated passes, micro-batches in arrival order",
        stepS: seconds.baseline.map((s) => round(s)),
        medianS: round(baseline),
      },
      current: {
        what: "old-policy logprobs from the differentiated pass, micro-batches by length",
        stepS: seconds.current.map((s) => round(s)),
        medianS: round(current),
      },
      threads: {
        what: "the current step with one gradient thread beside the learner's (threads 2)",
        stepS: seconds.threads.map((s) => round(s)),
        medianS: round(threaded),
      },
      gradientFreePassesPerStep: {
        baseline: scoringPasses.baseline / (steps + 1),
        current: scoringPasses.current / (steps + 1),
        threads: scoringPasses.threads / (steps + 1),
      },
      speedup: round(baseline / current),
      speedupWithThreads: round(baseline / threaded),
      threadsOverOneThread: round(current / threaded),
      sameResults: { maxLossDifference, maxGradNormDifference, maxThreadsDifference },
    },
    null,
    2,
  ),
);
learners.baseline.dispose();
learners.current.dispose();
learners.threads.dispose();
model.dispose();
