// bench/seeds: does a seed-003-style command (Hydra groups and TRL names, no --config file)
// learn on the arithmetic data as the README's command does over the same steps? Runs, one
// after another on one machine:
//   readme  npx lean-grpo train examples/arith.jsonl --config configs/train/arith.yaml
//   seed003 npx lean-grpo train dataset=arith exp_name=seed003 training.per_device_train_batch_size=16
//           training.gradient_accumulation_steps=8 training.num_train_epochs=2
//           (TRL's 16 × 8 completions over 8 per prompt: 16 prompts a step, the README's; 2 epochs of
//           the 800 problems at 16 a step: 100 steps; the prompt, learner settings, reward and
//           budget from the dataset=arith group and the model=arith-tiny group it chooses)
//   seed003-lr  the same with seed 003's own default learning rate, training.learning_rate=5e-6
//   seed001 npx lean-grpo train examples/arith.jsonl --algorithm grpo --num-generations 8
//           eval.data=examples/arith-heldout.jsonl (seed 001's command as docs/guide/seeds.md translates
//           it: a data file, no group; the prompt and learner settings come with models/arith-tiny)
// and prints JSON: each arm's held-out greedy accuracy at every evaluation, its wall time, and
// the change from step 0 to the last step beside the README's (the ratio seed003 / readme).
//
//   npx tsx bench/seeds/main.ts [--arms readme,seed003,seed003-lr,seed001] [--steps 100] [--out runs/bench-seeds]
//
// --steps below 100 sets training.steps=N on every arm, in place of its epochs (a quicker, partial comparison).
import { mkdirSync, readdirSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { readRunLines, runTrain } from "../support/train-run.js";

const { values: args } = parseArgs({
  options: {
    arms: { type: "string", default: "readme,seed003,seed003-lr" },
    steps: { type: "string", default: "100" },
    out: { type: "string", default: "runs/bench-seeds" },
  },
});
const steps = Number(args.steps);
const SEED003 = [
  "dataset=arith",
  "training.per_device_train_batch_size=16",
  "training.gradient_accumulation_steps=8",
  "training.num_train_epochs=2",
];
const ARMS: Record<string, string[]> = {
  readme: ["examples/arith.jsonl", "--config", "configs/train/arith.yaml"],
  seed003: [...SEED003],
  "seed003-lr": [...SEED003, "training.learning_rate=5e-6"],
  seed001: ["examples/arith.jsonl", "--algorithm", "grpo", "--num-generations", "8", "eval.data=examples/arith-heldout.jsonl"],
};

interface ArmResult {
  arm: string;
  command: string;
  code: number;
  wall_s: number;
  load_before: number;
  /** Held-out greedy accuracy by evaluated step. */
  heldout: Record<number, number>;
  change: number;
}

const results: ArmResult[] = [];
for (const arm of args.arms.split(",")) {
  const base = ARMS[arm];
  if (!base) throw new Error(`unknown arm "${arm}"; accepted: ${Object.keys(ARMS).join(", ")}`);
  const out = path.resolve(args.out, arm);
  mkdirSync(out, { recursive: true });
  const load = loadavg()[0]!;
  // A partial run sets its length in place of the epochs (both on the command line would be refused).
  const length = steps < 100 ? [...base.filter((w) => !w.startsWith("training.num_train_epochs=")), `training.steps=${steps}`] : base;
  const run = await runTrain([...length, `exp_name=${arm}`, "--output_dir", out], path.join(out, "stdout.log"), arm);
  const [runDir] = readdirSync(out).filter((name) => name.startsWith(`${arm}-`));
  const evals = runDir ? readRunLines<{ step: number; heldout_accuracy: number }>(path.join(out, runDir, "eval.jsonl")) : [];
  const heldout = Object.fromEntries(evals.map((e) => [e.step, e.heldout_accuracy]));
  const change = evals.length > 1 ? evals.at(-1)!.heldout_accuracy - evals[0]!.heldout_accuracy : Number.NaN;
  results.push({ arm, command: run.command, code: run.code, wall_s: run.wallS, load_before: load, heldout, change });
}
const readme = results.find((r) => r.arm === "readme");
process.stdout.write(
  `${JSON.stringify(
    {
      steps,
      arms: results,
      ratio_of_change_to_readme: readme ? Object.fromEntries(results.map((r) => [r.arm, r.change / readme.change])) : undefined,
    },
    null,
    2,
  )}\n`,
);
