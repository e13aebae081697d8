// bench/main-command: the README's set-up command, as a new user runs it, on the code before
// issue 26 and on this code, in one run on the same machine: for each arm a fresh clone at its
// commit, then `npm ci && npx lean-grpo train examples/arith.jsonl --config configs/train/arith.yaml`,
// timed as a whole (and npm ci apart). Rounds alternate which arm goes first, so neither gets
// the quieter half of a shared machine. Prints JSON: each arm's wall times, held-out curve and
// the machine's load while it ran, and the ratio current / baseline (issue 26's goal: ≤ 0.5).
//
//   npx tsx bench/main-command/main.ts [--baseline 93984c2] [--current HEAD] [--rounds 1] [--steps 100]
//
// --steps below 100 appends training.steps=N to both commands (a quicker, partial comparison).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readRunLines } from "../support/train-run.js";

const { values: args } = parseArgs({
  options: {
    // The commit issue 26 was filed against (main before any of its work).
    baseline: { type: "string", default: "93984c2" },
    current: { type: "string", default: "HEAD" },
    rounds: { type: "string", default: "1" },
    steps: { type: "string", default: "100" },
  },
});
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const steps = Number(args.steps);
const TRAIN = [
  "lean-grpo",
  "train",
  "examples/arith.jsonl",
  "--config",
  "configs/train/arith.yaml",
  ...(steps < 100 ? [`training.steps=${steps}`] : []),
];

interface Timed {
  code: number;
  seconds: number;
  output: string;
}

function timed(command: string, argv: string[], cwd: string): Promise<Timed> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, seconds: (performance.now() - started) / 1000, output }));
  });
}

async function git(argv: string[], cwd = REPO): Promise<string> {
  const result = await timed("git", argv, cwd);
  if (result.code !== 0) throw new Error(`git ${argv.join(" ")} failed: ${result.output}`);
  return result.output.trim();
}

interface ArmResult {
  arm: string;
  commit: string;
  round: number;
  npmCiS: number;
  trainS: number;
  totalS: number;
  loadAverage: { before: number; after: number };
  heldout: string[];
  /** Where the time went, as the run's own summary table says it (step time, its phases, evaluations). */
  summary: string[];
}

const round1 = (x: number) => Math.round(x * 10) / 10;

async function runArm(arm: string, commit: string, round: number, scratch: string): Promise<ArmResult> {
  const dir = path.join(scratch, `${arm}-${round}`);
  await git(["clone", "--quiet", "--no-checkout", REPO, dir]);
  await git(["checkout", "--quiet", commit], dir);
  process.stderr.write(`round ${round}, ${arm} (${commit.slice(0, 7)}): npm ci && npx ${TRAIN.join(" ")}\n`);
  const before = loadavg()[0]!;
  const install = await timed("npm", ["ci", "--no-audit", "--no-fund"], dir);
  if (install.code !== 0) throw new Error(`npm ci failed in ${dir}:\n${install.output.slice(-2000)}`);
  const train = await timed("npx", TRAIN, dir);
  if (train.code !== 0) throw new Error(`${arm}: the train command exited ${train.code}:\n${train.output.slice(-3000)}`);
  const runs = path.join(dir, "runs");
  const run = readdirSync(runs).sort().at(-1)!;
  const evals = readRunLines<{ step: number; heldout_accuracy: number }>(path.join(runs, run, "eval.jsonl"));
  const result: ArmResult = {
    arm,
    commit,
    round,
    npmCiS: round1(install.seconds),
    trainS: round1(train.seconds),
    totalS: round1(install.seconds + train.seconds),
    loadAverage: { before: round1(before), after: round1(loadavg()[0]!) },
    heldout: evals.map((e) => `${e.step}: ${(100 * e.heldout_accuracy).toFixed(1)}%`),
    summary: timeRows(train.output),
  };
  process.stderr.write(`  ${JSON.stringify(result)}\n`);
  rmSync(dir, { recursive: true, force: true });
  return result;
}

/** The time rows of the train command's summary table, each as one line of text. */
function timeRows(output: string): string[] {
  const rows: string[] = [];
  for (const line of output.split("\n")) {
    const cells = line.split("│").map((cell) => cell.trim());
    if (cells.length < 3) continue;
    const [name, value] = [cells[1]!, cells[2]!];
    if (name) rows.push(`${name}: ${value}`);
    else if (rows.length > 0 && value) rows[rows.length - 1] += ` ${value}`;
  }
  const timing = /^(step time|generate|verify|train|other|overlapped|held-out eval)/;
  return rows.filter((row) => timing.test(row));
}

const commits = { baseline: await git(["rev-parse", args.baseline!]), current: await git(["rev-parse", args.current!]) };
const scratch = mkdtempSync(path.join(tmpdir(), "main-command-"));
const results: ArmResult[] = [];
try {
  for (let round = 0; round < Number(args.rounds); round++) {
    const order = round % 2 === 0 ? (["baseline", "current"] as const) : (["current", "baseline"] as const);
    for (const arm of order) results.push(await runArm(arm, commits[arm], round, scratch));
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};
const of = (arm: string) => results.filter((r) => r.arm === arm);
const baselineS = median(of("baseline").map((r) => r.totalS));
const currentS = median(of("current").map((r) => r.totalS));
console.log(
  JSON.stringify(
    {
      benchmark: "main-command",
      command: `npm ci && npx ${TRAIN.join(" ")}`,
      machine: `${cpus().length} × ${cpus()[0]?.model ?? "?"}`,
      commits,
      runs: results,
      baseline: { medianS: baselineS, what: "the code issue 26 was filed against" },
      current: { medianS: currentS },
      ratio: Math.round((currentS / baselineS) * 1000) / 1000,
      goal: "≤ 0.5 (issue 26)",
      // Every round of an arm must repeat its curve (a run is deterministic given its code).
      curvesRepeat: ["baseline", "current"].every((arm) =>
        of(arm).every((r) => JSON.stringify(r.heldout) === JSON.stringify(of(arm)[0]!.heldout)),
      ),
    },
    null,
    2,
  ),
);
