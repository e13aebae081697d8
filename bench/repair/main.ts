// bench/repair: repair mode against the single-turn run, from the same warm start, seed, data
// and step budget (the train config's), one after the other, each its own `lean-grpo train`
// process: "whole" (training.mode=whole; held-out evaluation with eval.max_turns=2, so its
// policy also gets a second, feedback-conditioned attempt at evaluation) and "repair"
// (training.mode=repair rollout.max_turns=2). Prints, per arm and evaluation, held-out greedy
// accuracy after turn 1 and after turn 2, the share of second attempts that were right, and
// the run's wall time; writes results.json and table.md under --out.
//
// Usage: nice -n 10 npx tsx bench/repair/main.ts [--config configs/train/arith.yaml] [--data examples/arith.jsonl]
//          [--steps N] [--out DIR] [-- more.overrides=...]
//        npx tsx bench/repair/main.ts --from DIR     # summarise the runs under DIR/whole and DIR/repair again
// Runs go one at a time: wall times compare only on an otherwise quiet machine (say the load).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { readRunLines, runTrain, type TrainRun } from "../support/train-run.js";

const { values, positionals } = parseArgs({
  options: {
    config: { type: "string", default: "configs/train/arith.yaml" },
    data: { type: "string", default: "examples/arith.jsonl" },
    steps: { type: "string" },
    out: { type: "string", default: path.join("/tmp", `bench-repair-${new Date().toISOString().replace(/[:.]/g, "-")}`) },
    from: { type: "string" },
  },
  allowPositionals: true,
});

const ARMS = {
  whole: ["training.mode=whole", "eval.max_turns=2"],
  repair: ["training.mode=repair", "rollout.max_turns=2"],
} as const;
type Arm = keyof typeof ARMS;

interface EvalLine {
  step: number;
  heldout_accuracy: number;
  problems: number;
  repair?: { accuracy_turn1: number; accuracy_last_turn: number; second_attempts: number; repaired: number };
}

interface ArmResult {
  arm: Arm;
  command: string;
  run_dir: string;
  exit_code: number;
  wall_s: number;
  steps: number;
  evals: EvalLine[];
  /** Training rollouts (sampled at the run's temperature): share of the first attempts right, of the wrong ones a later attempt put right. */
  train_last: { pass_rate_turn1?: number; repair_success_rate?: number } | undefined;
}

function train(arm: Arm, out: string): Promise<TrainRun> {
  const args = [values.data, "--config", values.config, ...ARMS[arm], `runs_dir=${path.join(out, arm)}`];
  if (values.steps) args.push(`training.steps=${values.steps}`);
  args.push(...positionals);
  return runTrain(args, path.join(out, `${arm}.log`), "bench/repair");
}

function armResult(arm: Arm, out: string, run: { code: number; wallS: number; command: string }): ArmResult {
  const runs = path.join(out, arm);
  const dir = existsSync(runs) ? readdirSync(runs).sort().at(-1) : undefined;
  const runDir = dir ? path.join(runs, dir) : "";
  const metrics = readRunLines<{ step: number; metrics: Record<string, number> }>(path.join(runDir, "metrics.jsonl"));
  const last = metrics.at(-1)?.metrics;
  return {
    arm,
    command: run.command,
    run_dir: runDir,
    exit_code: run.code,
    wall_s: run.wallS,
    steps: metrics.at(-1)?.step ?? 0,
    evals: readRunLines<EvalLine>(path.join(runDir, "eval.jsonl")),
    train_last: last ? { pass_rate_turn1: last.pass_rate_turn1, repair_success_rate: last.repair_success_rate } : undefined,
  };
}

const pct = (x: number | undefined) => (x === undefined ? "–" : `${(100 * x).toFixed(1)} %`);
const minutes = (s: number) => `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;

function table(results: readonly ArmResult[]): string {
  const lines = [
    "| arm | after step | accuracy, turn 1 | accuracy, turn 2 | second attempts right | wall time |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of results) {
    for (const e of r.evals) {
      const second = e.repair && e.repair.second_attempts > 0 ? e.repair.repaired / e.repair.second_attempts : undefined;
      const tail = e.repair ? `${e.repair.repaired} / ${e.repair.second_attempts} (${pct(second)})` : "–";
      const wall = e === r.evals.at(-1) ? minutes(r.wall_s) : "";
      lines.push(
        `| ${r.arm} | ${e.step} | ${pct(e.repair?.accuracy_turn1 ?? e.heldout_accuracy)} | ${pct(e.repair?.accuracy_last_turn)} | ${tail} | ${wall} |`,
      );
    }
  }
  return lines.join("\n");
}

let results: ArmResult[];
if (values.from) {
  // Wall times of an earlier run of this bench (results.json), if it left them.
  const earlier = existsSync(path.join(values.from, "results.json"))
    ? (JSON.parse(readFileSync(path.join(values.from, "results.json"), "utf8")) as ArmResult[])
    : [];
  results = (Object.keys(ARMS) as Arm[]).map((arm) => {
    const before = earlier.find((r) => r.arm === arm);
    return armResult(arm, values.from!, {
      code: before?.exit_code ?? 0,
      wallS: before?.wall_s ?? Number.NaN,
      command: before?.command ?? "",
    });
  });
} else {
  mkdirSync(values.out, { recursive: true });
  results = [];
  for (const arm of Object.keys(ARMS) as Arm[]) results.push(armResult(arm, values.out, await train(arm, values.out)));
  writeFileSync(path.join(values.out, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(values.out, "table.md"), `${table(results)}\n`);
}
console.log(JSON.stringify({ results }, null, 2));
console.log(table(results));
