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
// - cores: the process's CPU time over its wall time during the steady steps (all threads);
//   main_busy / learner_busy: each thread's event-loop utilisation (tfjs work is synchronous,
//   so a busy loop is a busy core). Above 1 core, generation and training overlap.
//
// Layouts, alternated round by round so that neither gets the quieter half of a shared machine:
//   one-thread  every service on the main thread, sync (the baseline)
//   thread      the learner in its own worker thread, sync
//   thread+async  the same, with training.async (the next step's rollouts overlap training)
//   threads+async the learner and the sampler each in a thread of their own, async (the default)
//
// Usage: npx tsx bench/e2e/main.ts [--model models/arith-tiny] [--steps 6] [--batch 4] [--generations 4] [--max-tokens 16] [--rounds 1]
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
import { type EventLoopUtilization, performance as perf } from "node:perf_hooks";

const { values: args } = parseArgs({
  options: {
    model: { type: "string", default: "models/arith-tiny" },
    data: { type: "string", default: "examples/arith.jsonl" },
    steps: { type: "string", default: "6" },
    batch: { type: "string", default: "4" },
    generations: { type: "string", default: "4" },
    "max-tokens": { type: "string", default: "16" },
    rounds: { type: "string", default: "1" },
  },
});
const [steps, batch, generations, maxTokens, rounds] = [args.steps, args.batch, args.generations, args["max-tokens"], args.rounds].map(
  Number,
) as [number, number, number, number, number];

interface Layout {
  name: string;
  threads: string[];
  async: boolean;
}
const LAYOUTS: Layout[] = [
  { name: "one-thread", threads: [], async: false },
  { name: "thread", threads: ["learner"], async: false },
  { name: "thread+async", threads: ["learner"], async: true },
  { name: "threads+async", threads: ["learner", "inference"], async: true },
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

interface LayoutRun {
  rows: Record<string, number>[];
  cores: number;
  mainBusy: number;
  learnerBusy: number | null;
  rttS: number;
  rtt: number[];
}

async function runLayout(layout: Layout, round: number): Promise<LayoutRun> {
  const dir = path.join(work, `${layout.name}-${round}`);
  const mesh = await startMesh({
    modelDir,
    threads: layout.threads,
    // The learner writes checkpoints into runs_dir (shared-runs-dir.ts); the dataset's directory is the data root.
    services: { inference: { adapters: { dir: path.join(dir, "adapters") } } },
    orchestrator: { runs_dir: path.join(dir, "runs"), data_root: path.dirname(path.resolve(data)) },
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

    const runId = `bench-${layout.name.replace("+", "-")}-${round}`;
    await orchestrator.client.startRun({
      datasetPath: path.basename(data),
      runId,
      config: {
        training: {
          steps,
          batch_size: batch,
          num_generations: generations,
          max_tokens: maxTokens,
          checkpoint_every: steps,
          async: layout.async,
        },
      },
    });
    const learnerThread = mesh.servers.learner && "eventLoopUtilization" in mesh.servers.learner ? mesh.servers.learner : null;
    const rows: Record<string, number>[] = [];
    let last = performance.now();
    let final: RunState = RunState.UNSPECIFIED;
    let error = "";
    // CPU and busy shares are counted from the end of step 1 (warm-up) to the last step.
    let from: { wall: number; cpu: NodeJS.CpuUsage; main: EventLoopUtilization; learner: EventLoopUtilization | null } | null = null;
    let cores = 0;
    let mainBusy = 0;
    let learnerBusy: number | null = null;
    for await (const event of orchestrator.client.watchRun({ runId })) {
      if (event.event.case === "stateChange") ({ state: final, error } = event.event.value);
      if (event.event.case !== "step") continue;
      const now = performance.now();
      if (from) {
        const cpu = process.cpuUsage(from.cpu);
        cores = (cpu.user + cpu.system) / 1000 / (now - from.wall);
        mainBusy = perf.eventLoopUtilization(from.main).utilization;
        learnerBusy = learnerThread && from.learner ? learnerThread.eventLoopUtilization(from.learner).utilization : null;
      } else {
        from = {
          wall: now,
          cpu: process.cpuUsage(),
          main: perf.eventLoopUtilization(),
          learner: learnerThread ? learnerThread.eventLoopUtilization() : null,
        };
      }
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
        // With async rollouts the phases overlap and may sum past the wall time.
        other_s: Math.max(0, wall - phases),
        rpc_estimate_s: (2 * batch + 3) * rttS,
      });
    }
    if (final !== RunState.COMPLETED) throw new Error(`bench run ${runId} ended ${RunState[final]}: ${error}`);
    return { rows, cores, mainBusy, learnerBusy, rttS, rtt };
  } finally {
    orchestrator.transport.close();
    learner.transport.close();
    await mesh.shutdown();
  }
}

try {
  const runs = new Map<string, LayoutRun[]>(LAYOUTS.map((l) => [l.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const layout of LAYOUTS) runs.get(layout.name)!.push(await runLayout(layout, round));
  }
  const summary = (runsOfLayout: LayoutRun[]) => {
    // Step 1 pays one-time warm-up (tfjs kernels, first adapter): report the steady steps.
    const steady = runsOfLayout.flatMap((r) => r.rows.slice(1));
    const mean = (key: string) => steady.reduce((a, r) => a + r[key]!, 0) / steady.length;
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const wall = mean("wall_s");
    const split = Object.fromEntries(["generate_s", "verify_s", "score_s", "train_s", "sync_s", "other_s"].map((k) => [k, round(mean(k))]));
    const rtt = runsOfLayout.flatMap((r) => r.rtt).sort((a, b) => a - b);
    const learnerBusy = runsOfLayout.map((r) => r.learnerBusy).filter((x): x is number => x !== null);
    return {
      per_step_mean: { wall_s: round(wall), ...split },
      share_of_step: Object.fromEntries(Object.entries(split).map(([k, v]) => [k.replace(/_s$/, "_pct"), round((100 * v) / wall, 2)])),
      cpu: {
        cores_used: round(avg(runsOfLayout.map((r) => r.cores)), 2),
        main_thread_busy: round(avg(runsOfLayout.map((r) => r.mainBusy)), 2),
        learner_thread_busy: learnerBusy.length ? round(avg(learnerBusy), 2) : null,
      },
      rpc_baseline: {
        unary_round_trip_ms_mean: round(avg(runsOfLayout.map((r) => r.rttS)) * 1000, 3),
        unary_round_trip_ms_p99: round(percentile(rtt, 99) * 1000, 3),
        rpcs_per_step: 2 * batch + 3,
        rpc_estimate_pct_of_step: round((100 * mean("rpc_estimate_s")) / wall, 2),
      },
      per_step: runsOfLayout.flatMap((r) => r.rows).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, round(v)]))),
    };
  };
  const layouts = Object.fromEntries(LAYOUTS.map((l) => [l.name, summary(runs.get(l.name)!)]));
  const baseline = layouts["one-thread"]!.per_step_mean.wall_s;
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: "e2e",
        model: shipped ? modelDir : "tiny random test model (models/arith-tiny has no config.json yet)",
        config: { steps, batch, generations, max_tokens: maxTokens, rounds, steady_steps_per_run: steps - 1 },
        baseline: "one-thread (every service on the main thread, sync)",
        speedup_vs_baseline: Object.fromEntries(LAYOUTS.map((l) => [l.name, round(baseline / layouts[l.name]!.per_step_mean.wall_s, 2)])),
        other_pct_goal: 5,
        other_within_goal: layouts["one-thread"]!.share_of_step.other_pct! <= 5,
        layouts,
      },
      null,
      1,
    )}\n`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}

function round(x: number, digits = 4): number {
  return Number(x.toFixed(digits));
}
