// bench/e2e: where the time of a training step goes on the embedded mesh (every service on
// loopback gRPC): generation, verification, scoring, training, adapter sync, and everything
// else (RPC, serialisation, bookkeeping), with "everything else" as a share of the step's wall
// time (goal ≤ 5 %). The baseline, measured in the same run, is the step's own wall time.
//
// - wall: time between consecutive step events as a watcher receives them (includes metrics,
//   run.json, report and checkpoint writing).
// - generate / verify / score: the loop's split of the rollout wall time (client side, so the
//   Generate and ScoreGroup RPC costs are inside them: the contract carries no server-side time).
// - train: the learner's own compute (samples' tokens / its tokens_per_second); the rest of the
//   TrainStep call is RPC and counts as "everything else".
// - rpc_estimate: RPCs per step × the measured round trip of a small unary call (GetStatus), an
//   estimate of the pure RPC cost hidden in the phases above.
//
// Usage: npx tsx bench/e2e/main.ts [--model models/arith-tiny] [--steps 6] [--batch 4] [--generations 4] [--max-tokens 16]
// Without a model directory holding config.json it uses the tiny random test model and generated sums.
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { createServiceClient } from "@lean-grpo/kit";
import { startMesh } from "@lean-grpo/cli";
import { writeTinyModel } from "../../tests/support/tiny-model.js";
import { percentile } from "../support/percentile.js";

const { values: args } = parseArgs({
  options: {
    model: { type: "string", default: "models/arith-tiny" },
    data: { type: "string", default: "examples/arith.jsonl" },
    steps: { type: "string", default: "6" },
    batch: { type: "string", default: "4" },
    generations: { type: "string", default: "4" },
    "max-tokens": { type: "string", default: "16" },
  },
});
const [steps, batch, generations, maxTokens] = [args.steps, args.batch, args.generations, args["max-tokens"]].map(Number) as [
  number,
  number,
  number,
  number,
];

const work = await mkdtemp(path.join(tmpdir(), "bench-e2e-"));
const shipped = existsSync(path.join(args.model, "config.json"));
const modelDir = shipped ? args.model : await writeTinyModel(path.join(work, "model"));
// The tiny test model's character vocabulary covers only digits and operators: it gets its own problems.
const data = shipped && existsSync(args.data) ? args.data : path.join(work, "arith.jsonl");
if (data !== args.data) {
  const { writeFile } = await import("node:fs/promises");
  await writeFile(data, Array.from({ length: 32 }, (_, i) => JSON.stringify({ problem: `${i}+${i}`, answer: String(2 * i) })).join("\n"));
}

const mesh = await startMesh({
  modelDir,
  services: { inference: { adapters: { dir: path.join(work, "adapters") } }, learner: { checkpoint_dir: path.join(work, "ckpt") } },
  orchestrator: { runs_dir: path.join(work, "runs") },
});
const orchestrator = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
const learner = createServiceClient(LearnerService, { endpoints: [mesh.urls.learner!] });
try {
  // The RPC baseline: a small unary call's round trip over the same loopback gRPC path.
  for (let i = 0; i < 20; i++) await learner.client.getStatus({});
  const rtt: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    await learner.client.getStatus({});
    rtt.push((performance.now() - t) / 1000);
  }
  const rttS = rtt.reduce((a, b) => a + b, 0) / rtt.length;

  await orchestrator.client.startRun({
    datasetPath: data,
    runId: "bench",
    config: { training: { steps, batch_size: batch, num_generations: generations, max_tokens: maxTokens, checkpoint_every: steps } },
  });
  const rows: Record<string, number>[] = [];
  let last = performance.now();
  let final: RunState = RunState.UNSPECIFIED;
  let error = "";
  for await (const event of orchestrator.client.watchRun({ runId: "bench" })) {
    if (event.event.case === "stateChange") ({ state: final, error } = event.event.value);
    if (event.event.case !== "step") continue;
    const now = performance.now();
    const { timings, metrics } = event.event.value;
    const wall = (now - last) / 1000;
    last = now;
    // The learner reports the tokens it processed and its rate: their ratio is its compute time.
    const learnerCompute =
      metrics.num_tokens && metrics.tokens_per_second
        ? Math.min(timings!.trainS, metrics.num_tokens / metrics.tokens_per_second)
        : timings!.trainS;
    const phases = timings!.generateS + timings!.verifyS + timings!.scoreS + learnerCompute + timings!.syncS;
    rows.push({
      wall_s: wall,
      generate_s: timings!.generateS,
      verify_s: timings!.verifyS,
      score_s: timings!.scoreS,
      train_s: learnerCompute,
      sync_s: timings!.syncS,
      other_s: Math.max(0, wall - phases),
      rpc_estimate_s: (2 * batch + 3) * rttS,
    });
  }
  if (final !== RunState.COMPLETED) throw new Error(`bench run ended ${RunState[final]}: ${error}`);
  // Step 1 pays one-time warm-up (tfjs kernels, first adapter): report the steady steps.
  const steady = rows.slice(1);
  const mean = (key: string) => steady.reduce((a, r) => a + r[key]!, 0) / steady.length;
  const wall = mean("wall_s");
  const split = Object.fromEntries(["generate_s", "verify_s", "score_s", "train_s", "sync_s", "other_s"].map((k) => [k, round(mean(k))]));
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: "e2e",
        model: shipped ? modelDir : "tiny random test model (models/arith-tiny has no config.json yet)",
        config: { steps, batch, generations, max_tokens: maxTokens, steady_steps: steady.length },
        per_step_mean: { wall_s: round(wall), ...split },
        share_of_step: Object.fromEntries(Object.entries(split).map(([k, v]) => [k.replace(/_s$/, "_pct"), round((100 * v) / wall, 2)])),
        other_pct_goal: 5,
        other_within_goal: (100 * mean("other_s")) / wall <= 5,
        rpc_baseline: {
          unary_round_trip_ms_mean: round(rttS * 1000, 3),
          unary_round_trip_ms_p99: round(
            percentile(
              [...rtt].sort((a, b) => a - b),
              99,
            ) * 1000,
            3,
          ),
          rpcs_per_step: 2 * batch + 3,
          rpc_estimate_pct_of_step: round((100 * mean("rpc_estimate_s")) / wall, 2),
        },
        per_step: rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, round(v)]))),
      },
      null,
      1,
    )}\n`,
  );
} finally {
  orchestrator.transport.close();
  learner.transport.close();
  await mesh.shutdown();
  await rm(work, { recursive: true, force: true });
}

function round(x: number, digits = 4): number {
  return Number(x.toFixed(digits));
}
