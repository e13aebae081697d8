// A quick RL sanity check of a model directory with the learner core alone (no services):
// GRPO steps on the training set, reward 1 for a correct \boxed{} answer, and the held-out
// greedy accuracy before and after. Shows the warm-started model leaves RL room to act.
//   npx tsx scripts/arith/rl-sanity.ts [--model models/arith-tiny] [--steps 30] [--prompts 16] [--generations 8] [--lr 1e-3] [--algo-config '{"beta":0}']
import { readFileSync } from "node:fs";
import { readJsonObjects } from "@lean-grpo/jsonl";
import { parseArgs } from "node:util";
import { CausalLM, generate, LINEAR_MODULES, ModelTokenizer, SeededRandom, useBackend } from "@lean-grpo/lm";
import { Learner, type TrainingExample } from "@lean-grpo/learner";
import { greedyAccuracy, isCorrect, type ArithRecord } from "./greedy-accuracy.js";

const { values } = parseArgs({
  options: {
    model: { type: "string", default: "models/arith-tiny" },
    steps: { type: "string", default: "30" },
    prompts: { type: "string", default: "16" },
    generations: { type: "string", default: "8" },
    lr: { type: "string", default: "1e-3" },
    "eval-every": { type: "string", default: "10" },
    seed: { type: "string", default: "0" },
    "algo-config": { type: "string", default: '{"beta":0}' },
  },
});
const read = (file: string) => readJsonObjects(readFileSync(file, "utf8"), file).map(({ record }) => record as unknown as ArithRecord);
const train = read("examples/arith.jsonl");
const heldout = read("examples/arith-heldout.jsonl");
const [steps, promptsPerStep, generations, evalEvery, seed] = ["steps", "prompts", "generations", "eval-every", "seed"].map((k) =>
  Number(values[k as keyof typeof values]),
);

await useBackend("auto");
const tokenizer = await ModelTokenizer.load(values.model);
const model = await CausalLM.load(values.model);
const learner = new Learner(model, {
  baseModel: values.model,
  lora: { rank: 16, alpha: 32, targetModules: [...LINEAR_MODULES], dropout: 0, useRslora: false },
  optimizer: {
    learningRate: Number(values.lr),
    maxGradNorm: 1,
    beta1: 0.9,
    beta2: 0.999,
    epsilon: 1e-8,
    weightDecay: 0,
    schedule: { name: "constant", warmupSteps: 0, totalSteps: steps! },
  },
  microBatchTokens: 8192,
  seed: seed!,
  keepVersions: 1,
});
const started = performance.now();
const evaluate = async (step: number) => {
  const result = await greedyAccuracy(model, tokenizer, heldout, { adapter: learner.policy });
  process.stdout.write(
    `${JSON.stringify({
      step,
      heldout_greedy_accuracy: result.accuracy,
      boxed: result.boxed,
      right_number: result.rightNumber,
      seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
    })}\n`,
  );
  return result.accuracy;
};
const random = new SeededRandom(seed!);
const before = await evaluate(0);
let after = before;
for (let step = 1; step <= steps!; step++) {
  const chosen = Array.from({ length: promptsPerStep! }, () => train[Math.floor(random.next() * train.length)]!);
  const prompts = chosen.map((r) => tokenizer.encodeChat([{ role: "user", content: r.problem }], { addGenerationPrompt: true }));
  const repeated = prompts.flatMap((p) => Array.from({ length: generations! }, () => p));
  const samples = await generate(model, repeated, {
    maxNewTokens: 32,
    temperature: 1,
    seed: seed! * 100_003 + step,
    adapter: learner.policy,
  });
  const examples: TrainingExample[] = samples.map((s, i) => {
    const record = chosen[Math.floor(i / generations!)]!;
    return {
      sampleId: `${step}-${i}`,
      groupId: `${step}-${Math.floor(i / generations!)}`,
      promptIds: repeated[i]!,
      completionIds: s.tokenIds,
      samplerLogprobs: s.logprobs,
      reward: isCorrect(tokenizer.decode(s.tokenIds, { skipSpecialTokens: true }), record.answer) ? 1 : 0,
      truncated: s.finishReason === "length",
    };
  });
  const result = await learner.trainStep({
    algorithm: "grpo",
    algorithmConfig: JSON.parse(values["algo-config"]) as Record<string, unknown>,
    mode: "rl",
    examples,
    step,
    expectedSamples: examples.length,
    numGenerations: generations!,
  });
  const meanReward = examples.reduce((n, e) => n + e.reward, 0) / examples.length;
  process.stdout.write(
    `${JSON.stringify({ step, mean_reward: Number(meanReward.toFixed(3)), loss: Number((result.metrics.loss ?? 0).toFixed(4)) })}\n`,
  );
  if (step % evalEvery! === 0 || step === steps) after = await evaluate(step);
}
process.stdout.write(
  `${JSON.stringify({
    before,
    after,
    gain_points: Number(((after - before) * 100).toFixed(1)),
    seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
  })}\n`,
);
