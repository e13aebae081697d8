// math_answer scores per second on one thread (main.ts runs this under
// `taskset -c 0`): the service's scoring path (evidence + composite with
// math_answer alone) against two baselines in the same run, string equality of
// the boxed text and the compute-engine used directly (parse both, isEqual),
// with each one's accuracy on the workload. Prints one JSON line.
// Usage: tsx math-throughput.ts [SECONDS] [PROBLEMS]
import { create } from "@bufbuild/protobuf";
import { ComputeEngine } from "@cortex-js/compute-engine";
import { CompletionSchema, TaskKind, TheoremSchema } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { applyOverrides, composeReward, extractLastBoxed, gatherEvidence, mathJudgeOptions } from "@lean-grpo/reward";
import { mathWorkload, type MathCase } from "./math-workload.js";

const seconds = Number(process.argv[2] ?? 3);
const problems = Number(process.argv[3] ?? 1500);
/** Fresh workloads for the service's passes (its cache must not carry over), the first for the baselines. */
const workloads = [1, 2, 3].map((seed) => mathWorkload(problems, seed));
const cases = workloads[0]!;

const reward = applyOverrides({ name: "math_answer", description: "", scorers: [] }, [
  { name: "math_answer", weight: 1, params: {}, field: "bench", paramsField: "bench" },
]);
const context = {
  verifier: undefined,
  signal: new AbortController().signal,
  deadline: Number.MAX_SAFE_INTEGER,
  leanTimeoutMs: 0,
  maxParallelVerifications: 1,
  math: mathJudgeOptions(undefined),
  requestId: "bench",
};
const theorems = new Map<string, ReturnType<typeof create<typeof TheoremSchema>>>();
const toMessages = (workload: MathCase[]) =>
  workload.map((c) => {
    if (!theorems.has(c.truth)) theorems.set(c.truth, create(TheoremSchema, { answer: c.truth, kind: TaskKind.MATH_ANSWER }));
    return { theorem: theorems.get(c.truth)!, completion: create(CompletionSchema, { text: c.completion }) };
  });

/** The service's path for one completion; true when judged correct. */
async function serviceScore(message: ReturnType<typeof toMessages>[number]): Promise<boolean> {
  const [evidence] = await gatherEvidence(
    message.theorem,
    [{ completion: message.completion, field: "completion", verificationField: "verification" }],
    context,
  );
  return composeReward(reward, evidence!, undefined).solved;
}

function stringEquality(c: MathCase): boolean {
  const boxed = extractLastBoxed(c.completion);
  return boxed.kind === "found" && boxed.content.replace(/\s+/g, "") === c.truth.replace(/\s+/g, "");
}

const ce = new ComputeEngine();
function computeEngineDirect(c: MathCase): boolean {
  const boxed = extractLastBoxed(c.completion);
  return boxed.kind === "found" && ce.parse(boxed.content).isEqual(ce.parse(c.truth)) === true;
}

interface Measured {
  scoresPerSecond: number;
  scored: number;
  seconds: number;
  accuracy: number;
}

/**
 * The service once over each workload, timed: every group is new to it, as in
 * training (its parse cache only helps within a group, where the ground truth
 * and often the answers repeat). The median pass is reported.
 */
async function measureServicePasses(): Promise<Measured & { passes: number[]; scoresPerSecondByForm: Record<string, number> }> {
  // Warm the JIT on a workload of its own, not timed.
  for (const message of toMessages(mathWorkload(600, 0))) await serviceScore(message);
  let right = 0;
  let total = 0;
  const passes: { rate: number; seconds: number }[] = [];
  const perForm = new Map<string, { scored: number; ms: number }>();
  for (const workload of workloads) {
    const messages = toMessages(workload);
    const start = performance.now();
    for (let i = 0; i < workload.length; i++) {
      const before = performance.now();
      if ((await serviceScore(messages[i]!)) === workload[i]!.correct) right++;
      const form = perForm.get(workload[i]!.form) ?? { scored: 0, ms: 0 };
      perForm.set(workload[i]!.form, { scored: form.scored + 1, ms: form.ms + performance.now() - before });
    }
    const elapsed = (performance.now() - start) / 1000;
    total += workload.length;
    passes.push({ rate: Math.round(workload.length / elapsed), seconds: elapsed });
  }
  const median = [...passes].sort((a, b) => a.rate - b.rate)[1]!;
  return {
    scoresPerSecond: median.rate,
    scored: total,
    seconds: +median.seconds.toFixed(2),
    accuracy: right / total,
    passes: passes.map((p) => p.rate),
    scoresPerSecondByForm: Object.fromEntries([...perForm].map(([form, { scored, ms }]) => [form, Math.round((scored * 1000) / ms)])),
  };
}

/** Baselines keep nothing between calls: accuracy over one pass, then passes for `seconds`. */
function measureRepeated(score: (c: MathCase) => boolean): Measured {
  const right = cases.filter((c) => score(c) === c.correct).length;
  let scored = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    for (let i = 0; i < 256; i++) score(cases[(scored + i) % cases.length]!);
    scored += 256;
  }
  const elapsed = (performance.now() - start) / 1000;
  return { scoresPerSecond: Math.round(scored / elapsed), scored, seconds: +elapsed.toFixed(2), accuracy: right / cases.length };
}

const service = await measureServicePasses();
const strings = measureRepeated(stringEquality);
const engine = measureRepeated(computeEngineDirect);
process.stdout.write(
  `${JSON.stringify({
    completionsPerWorkload: cases.length,
    forms: [...new Set(cases.map((c) => c.form))],
    meanCompletionChars: Math.round(cases.reduce((a, c) => a + c.completion.length, 0) / cases.length),
    service,
    baselines: { stringEquality: strings, computeEngineDirect: engine },
    ratios: {
      serviceOverComputeEngineDirect: +(service.scoresPerSecond / engine.scoresPerSecond).toFixed(2),
      serviceOverStringEquality: +(service.scoresPerSecond / strings.scoresPerSecond).toFixed(3),
    },
  })}\n`,
);
