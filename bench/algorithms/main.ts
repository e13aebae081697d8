// bench/algorithms: every algorithm of the GRPO family trained from the same warm start, with
// the same seed, data, step budget and held-out evaluation (the train config's), one after the
// other, each as its own `lean-grpo train` process (the README's command with --algorithm).
// Writes, under --out: results.json (every evaluation of every run, wall times), table.md
// (held-out exact accuracy and right-number rate per evaluation, side by side) and chart.svg
// (the curves), and prints the table.
//
// Usage: nice -n 10 npx tsx bench/algorithms/main.ts [--config configs/train/arith.yaml] [--data examples/arith.jsonl]
//          [--algorithms grpo,drgrpo,dapo,gspo,dgpo,cispo,sapo] [--steps N] [--out DIR] [-- more.overrides=...]
// Each algorithm runs with its learner defaults; drgrpo's max_completion_length is the run's
// training.max_tokens by construction (the orchestrator sends it). Runs go one at a time: the
// wall times are comparable only on an otherwise quiet machine.
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { readRunLines, runTrain, type TrainRun } from "../support/train-run.js";

const { values, positionals } = parseArgs({
  options: {
    config: { type: "string", default: "configs/train/arith.yaml" },
    data: { type: "string", default: "examples/arith.jsonl" },
    algorithms: { type: "string", default: "grpo,drgrpo,dapo,gspo,dgpo,cispo,sapo" },
    steps: { type: "string" },
    out: { type: "string", default: path.join("/tmp", `bench-algorithms-${new Date().toISOString().replace(/[:.]/g, "-")}`) },
  },
  allowPositionals: true,
});

interface EvalLine {
  step: number;
  heldout_accuracy: number;
  problems: number;
  forms?: { right_number: number; worked_share: number; completion_tokens: number };
}

interface AlgorithmResult {
  algorithm: string;
  run_dir: string;
  exit_code: number;
  wall_s: number;
  steps: number;
  step_s: number;
  evals: EvalLine[];
}

const algorithms = values.algorithms.split(",").map((a) => a.trim());
mkdirSync(values.out, { recursive: true });

function train(algorithm: string): Promise<TrainRun> {
  const args = [values.data, "--config", values.config, "--algorithm", algorithm, `runs_dir=${path.join(values.out, algorithm)}`];
  if (values.steps) args.push(`training.steps=${values.steps}`);
  args.push(...positionals);
  return runTrain(args, path.join(values.out, `${algorithm}.log`), "bench/algorithms");
}

const results: AlgorithmResult[] = [];
for (const algorithm of algorithms) {
  const { code, wallS } = await train(algorithm);
  const runsDir = path.join(values.out, algorithm);
  const runDir = readdirSync(runsDir).map((d) => path.join(runsDir, d))[0] ?? runsDir;
  const steps = readRunLines<{ timings: { total_s: number } }>(path.join(runDir, "metrics.jsonl"));
  results.push({
    algorithm,
    run_dir: runDir,
    exit_code: code,
    wall_s: wallS,
    steps: steps.length,
    step_s: steps.reduce((a, s) => a + s.timings.total_s, 0) / Math.max(1, steps.length),
    evals: readRunLines<EvalLine>(path.join(runDir, "eval.jsonl")),
  });
  writeFileSync(
    path.join(values.out, "results.json"),
    `${JSON.stringify({ config: values.config, data: values.data, results }, null, 2)}\n`,
  );
}

const pct = (x: number | undefined) => (x === undefined ? "-" : `${(100 * x).toFixed(1)}`);
const evalSteps = [...new Set(results.flatMap((r) => r.evals.map((e) => e.step)))].sort((a, b) => a - b);
const minutes = (s: number) => `${Math.floor(Math.round(s) / 60)} min ${Math.round(s) % 60} s`;
const header = `| algorithm | ${evalSteps.map((s) => `${s}`).join(" | ")} | worked out (last) | wall time | s/step |`;
const rule = `| --- | ${evalSteps.map(() => "---").join(" | ")} | --- | --- | --- |`;
const rows = results.map((r) => {
  const at = (step: number) => r.evals.find((e) => e.step === step);
  const cells = evalSteps.map((s) => {
    const e = at(s);
    return e ? `${pct(e.heldout_accuracy)} / ${pct(e.forms?.right_number)}` : "-";
  });
  const last = r.evals[r.evals.length - 1];
  return `| ${r.algorithm}${r.exit_code === 0 ? "" : " (failed)"} | ${cells.join(" | ")} | ${pct(last?.forms?.worked_share)} % | ${minutes(r.wall_s)} | ${r.step_s.toFixed(2)} |`;
});
const table = [
  `Held-out greedy exact accuracy / right-number rate (%) after each evaluated step (${results[0]?.evals[0]?.problems ?? "?"} problems),`,
  `${values.config}${values.steps ? `, training.steps=${values.steps}` : ""}${positionals.length ? `, ${positionals.join(" ")}` : ""}:`,
  "",
  header,
  rule,
  ...rows,
  "",
].join("\n");
writeFileSync(path.join(values.out, "table.md"), table);
writeFileSync(path.join(values.out, "chart.svg"), chart(results));
process.stdout.write(`${table}\nwritten: ${values.out}/{results.json,table.md,chart.svg}\n`);

/** Held-out accuracy (solid) and right-number rate (dashed) against the step, one colour per algorithm. */
function chart(runs: readonly AlgorithmResult[]): string {
  const [width, height, left, right, top, bottom] = [720, 400, 50, 120, 20, 40];
  const maxStep = Math.max(1, ...runs.flatMap((r) => r.evals.map((e) => e.step)));
  const x = (step: number) => left + ((width - left - right) * step) / maxStep;
  const y = (value: number) => top + (height - top - bottom) * (1 - value);
  const colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
  const grid = [0, 0.2, 0.4, 0.6, 0.8, 1]
    .map(
      (v) =>
        `<line x1="${left}" x2="${width - right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${100 * v}%</text>`,
    )
    .join("");
  const lines = runs
    .map((r, i) => {
      const colour = colours[i % colours.length];
      const path = (f: (e: EvalLine) => number | undefined, dash: string) => {
        const points = r.evals.filter((e) => f(e) !== undefined).map((e) => `${x(e.step).toFixed(1)},${y(f(e)!).toFixed(1)}`);
        return points.length ? `<polyline fill="none" stroke="${colour}" stroke-width="2" ${dash} points="${points.join(" ")}"/>` : "";
      };
      return (
        path((e) => e.heldout_accuracy, "") +
        path((e) => e.forms?.right_number, 'stroke-dasharray="5 4"') +
        `<text x="${width - right + 8}" y="${top + 16 * (i + 1)}" fill="${colour}" font-size="12">${r.algorithm}</text>`
      );
    })
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" role="img">
<title>Held-out exact accuracy and right-number rate per algorithm and step</title>
<rect width="100%" height="100%" fill="white"/>${grid}
<line x1="${left}" x2="${width - right}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>
<text x="${(left + width - right) / 2}" y="${height - 8}" text-anchor="middle" font-size="12">step (solid: held-out exact accuracy, dashed: right-number rate)</text>
<text x="${x(maxStep)}" y="${y(0) + 16}" text-anchor="middle" font-size="11">${maxStep}</text><text x="${x(0)}" y="${y(0) + 16}" text-anchor="middle" font-size="11">0</text>
${lines}
</svg>
`;
}
