// Does a reasoning vocabulary help? Three arms of the embedded arithmetic demo, same steps,
// prompts, seeds and budget (docs/concepts/reasoning-vocabulary.md, "The measurement"):
//   baseline  no reasoning vocabulary
//   gated     one copy of every id (n_r = n_s = 147), markers ":" / "\boxed{", gated mask, rows trained
//   frozen    the same vocabulary and mask with the new rows frozen at their copies (the control)
// Each arm runs `lean-grpo train` once per seed, one run after another (one machine), then the
// table is printed: held-out greedy accuracy at the start and the end (mean ± sample std over
// seeds), mean reward, completion length, reasoning share, step time and peak memory.
//
//   npx tsx bench/reasoning-vocab/run-arms.ts [--steps 30] [--seeds 0,1,2] [--out runs/reasoning-vocab]
//   npx tsx bench/reasoning-vocab/run-arms.ts --table runs/reasoning-vocab   # the table of finished runs
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    steps: { type: "string", default: "30" },
    seeds: { type: "string", default: "0,1,2" },
    arms: { type: "string", default: "baseline,gated,frozen" },
    out: { type: "string", default: "runs/reasoning-vocab" },
    "batch-size": { type: "string", default: "4" },
    "heldout-problems": { type: "string", default: "100" },
    table: { type: "string" },
  },
});

const REASONING = ["model.reasoning_vocab_size=147", 'model.reasoning_markers=[":", "\\\\boxed{"]', "model.reasoning_mask=gated"];
const ARMS: Record<string, string[]> = {
  baseline: [],
  gated: REASONING,
  frozen: [...REASONING, "services.learner.reasoning_rows=frozen"],
};

interface RunSummary {
  arm: string;
  seed: number;
  /** Held-out greedy accuracy by evaluated step. */
  curve: Record<number, number>;
  heldoutStart: number;
  heldoutEnd: number;
  rewardMean: number;
  completionLength: number;
  reasoningShare: number | null;
  reasoningShareInside: number | null;
  blockClosed: number | null;
  stepSeconds: number;
  peakRssMiB: number | null;
}

/** The run directory of an arm and seed: `<arm>-s<seed>-<time>-<random>` (exp_name names it), the newest. */
function runDir(out: string, name: string): string | undefined {
  const made = readdirSync(out).filter((n) => n.startsWith(`${name}-`) && existsSync(path.join(out, n, "run.json")));
  return made.sort().at(-1);
}

function runArm(arm: string, seed: number, out: string): void {
  const name = `${arm}-s${seed}`;
  if (runDir(out, name) && existsSync(path.join(out, runDir(out, name)!, "eval.jsonl"))) return; // finished earlier: keep it
  const steps = Number(values.steps);
  const args = [
    "lean-grpo",
    "train",
    "examples/arith.jsonl",
    "--config",
    "configs/train/arith.yaml",
    `training.steps=${steps}`,
    `training.batch_size=${values["batch-size"]}`,
    `training.seed=${seed}`,
    `services.learner.seed=${seed}`,
    `eval.every=${Math.max(1, Math.floor(steps / 3))}`,
    `eval.max_problems=${values["heldout-problems"]}`,
    `runs_dir=${out}`,
    `exp_name=${name}`,
    ...ARMS[arm]!,
  ];
  process.stderr.write(`[${new Date().toISOString()}] ${name}: npx ${args.join(" ")}\n`);
  // GNU time reports the peak resident memory of the whole mesh (every service is in this process).
  const result = spawnSync("/usr/bin/time", ["-v", "-o", path.join(out, `${name}.time`), "npx", ...args], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (result.status !== 0) process.stderr.write(`${name} exited with ${result.status}\n`);
}

const readLines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

function summarise(out: string, name: string): RunSummary | null {
  const found = runDir(out, name);
  if (!found) return null;
  const dir = path.join(out, found);
  if (!existsSync(path.join(dir, "eval.jsonl"))) return null;
  const [arm, seedPart] = name.split("-s");
  const evals = readLines(path.join(dir, "eval.jsonl")) as Array<{ step: number; heldout_accuracy: number }>;
  const steps = readLines(path.join(dir, "metrics.jsonl")) as Array<{ metrics: Record<string, number>; timings: Record<string, number> }>;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const metric = (key: string) => {
    const xs = steps.map((s) => s.metrics[key]).filter((x): x is number => typeof x === "number");
    return xs.length ? mean(xs) : null;
  };
  const timeText = existsSync(path.join(out, `${name}.time`)) ? readFileSync(path.join(out, `${name}.time`), "utf8") : "";
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(timeText);
  return {
    arm: arm!,
    seed: Number(seedPart),
    curve: Object.fromEntries(evals.map((e) => [e.step, e.heldout_accuracy])),
    heldoutStart: evals[0]!.heldout_accuracy,
    heldoutEnd: evals.at(-1)!.heldout_accuracy,
    rewardMean: metric("reward_mean") ?? 0,
    completionLength: metric("completion_length_mean") ?? 0,
    reasoningShare: metric("reasoning_share"),
    reasoningShareInside: metric("reasoning_share_inside"),
    blockClosed: metric("reasoning_block_closed"),
    stepSeconds: mean(steps.map((s) => s.timings.total_s ?? 0)),
    peakRssMiB: rss ? Number(rss[1]) / 1024 : null,
  };
}

/**
 * Step time over the baseline's of the same seed, mean ± std over seeds: the arms of a seed run
 * one after another, so they share the machine's load, which differs from seed to seed.
 */
function pairedRatio(rs: readonly RunSummary[], runs: readonly RunSummary[]): string {
  const ratios = rs.flatMap((r) => {
    const base = runs.find((b) => b.arm === "baseline" && b.seed === r.seed);
    return base && base.stepSeconds > 0 ? [r.stepSeconds / base.stepSeconds] : [];
  });
  if (ratios.length === 0) return "–";
  const m = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  const sd = ratios.length > 1 ? Math.sqrt(ratios.reduce((a, x) => a + (x - m) ** 2, 0) / (ratios.length - 1)) : 0;
  return `${m.toFixed(2)} ± ${sd.toFixed(2)}`;
}

function table(out: string): string {
  const names = new Set(readdirSync(out).flatMap((n) => /^((?:baseline|gated|frozen)-s\d+)(?:-|$)/.exec(n)?.[1] ?? []));
  const runs = [...names].map((n) => summarise(out, n)).filter((r): r is RunSummary => r !== null);
  const stats = (xs: number[]) => {
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1)) : 0;
    return { m, sd };
  };
  const pct = (xs: number[]) => {
    const { m, sd } = stats(xs);
    return `${(100 * m).toFixed(1)} ± ${(100 * sd).toFixed(1)} %`;
  };
  const num = (xs: (number | null)[], digits: number, scale = 1) => {
    const present = xs.filter((x): x is number => x !== null);
    return present.length ? `${(scale * stats(present).m).toFixed(digits)}` : "–";
  };
  const lines = [
    "| arm | seeds | held-out start | held-out end | reward (mean over steps) | completion tokens | reasoning share (inside block) | block closed | step time (s) | step time / baseline's (same seed) | peak RSS (MiB) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const arm of ["baseline", "gated", "frozen"]) {
    const rs = runs.filter((r) => r.arm === arm).sort((a, b) => a.seed - b.seed);
    if (rs.length === 0) continue;
    lines.push(
      `| ${arm} | ${rs.map((r) => r.seed).join(",")} | ${pct(rs.map((r) => r.heldoutStart))} | ${pct(rs.map((r) => r.heldoutEnd))} | ` +
        `${num(
          rs.map((r) => r.rewardMean),
          3,
        )} | ${num(
          rs.map((r) => r.completionLength),
          1,
        )} | ${num(
          rs.map((r) => r.reasoningShare),
          1,
          100,
        )} % (${num(
          rs.map((r) => r.reasoningShareInside),
          1,
          100,
        )} %) | ${num(
          rs.map((r) => r.blockClosed),
          1,
          100,
        )} % | ${num(
          rs.map((r) => r.stepSeconds),
          2,
        )} | ${pairedRatio(rs, runs)} | ${num(
          rs.map((r) => r.peakRssMiB),
          0,
        )} |`,
    );
  }
  // The held-out curve: accuracy at each evaluated step, mean ± sample std over seeds.
  const evalSteps = [...new Set(runs.flatMap((r) => Object.keys(r.curve).map(Number)))].sort((a, b) => a - b);
  const curve = [
    `| arm | ${evalSteps.map((s) => `step ${s}`).join(" | ")} |`,
    `| --- | ${evalSteps.map(() => "---").join(" | ")} |`,
    ...["baseline", "gated", "frozen"]
      .filter((arm) => runs.some((r) => r.arm === arm))
      .map((arm) => {
        const rs = runs.filter((r) => r.arm === arm);
        return `| ${arm} | ${evalSteps.map((s) => pct(rs.map((r) => r.curve[s]).filter((x): x is number => x !== undefined))).join(" | ")} |`;
      }),
  ];
  return `${lines.join("\n")}\n\nHeld-out greedy accuracy by step:\n\n${curve.join("\n")}\n\n${JSON.stringify(runs)}\n`;
}

if (values.table) {
  process.stdout.write(table(values.table));
} else {
  const out = path.resolve(values.out);
  mkdirSync(out, { recursive: true });
  const seeds = values.seeds.split(",").map(Number);
  // Seed-major: every arm of seed 0 before seed 1, so a cut-short measurement still compares arms.
  for (const seed of seeds) for (const arm of values.arms.split(",")) runArm(arm, seed, out);
  const text = table(out);
  writeFileSync(path.join(out, "table.md"), text);
  process.stdout.write(text);
}
