// Writes the arithmetic data sets, disjoint from each other:
//   examples/arith-heldout.jsonl  held-out evaluation problems ({problem, answer})
//   examples/arith.jsonl          the RL training set ({problem, answer})
//   examples/arith-validation.jsonl  a validation split ({problem, answer}) to choose settings on
//                                 (warm-start data, RL config) without touching the held-out set
//   --sft FILE                    warm-start data for `lean-grpo sft` ({problem, answer, solution}),
//                                 worked out (WORKED_SHARE) or direct, always boxed
//   npx tsx scripts/arith/make-data.ts [--sft FILE] [--sft-count N]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SeededRandom } from "@lean-grpo/random";
import { drawProblems, type ArithProblem } from "./arith-problems.js";

export const HELDOUT_SEED = 1;
export const TRAIN_SEED = 2;
export const SFT_SEED = 3;
export const VALIDATION_SEED = 4;
/**
 * The warm start's teacher is always right and always boxes its answer, but it answers in
 * two ways, like most SFT data: WORKED_SHARE of its answers are worked out in columns
 * (`27 + 45: 7+5=12, 2+4+1=7, \boxed{72}`), the rest direct (`27 + 45 = \boxed{72}`).
 * A 1 M-parameter student copies both, picks the more frequent direct form greedily, and
 * gets it right less often than the worked one: a two-digit sum with its carry in one token
 * is harder than one-digit facts written down one at a time. Nothing tells the student
 * which form to prefer but the reward.
 */
export const WORKED_SHARE = 0.4;

export interface ArithDataSets {
  heldout: ArithProblem[];
  train: ArithProblem[];
  validation: ArithProblem[];
  sft: ArithProblem[];
}

/** Four disjoint sets, drawn in this order (so the held-out and RL sets do not depend on the others' sizes). */
export function arithDataSets(sizes: { heldout: number; train: number; validation: number; sft: number }): ArithDataSets {
  const heldout = drawProblems(sizes.heldout, HELDOUT_SEED);
  const train = drawProblems(sizes.train, TRAIN_SEED, new Set(heldout.map((p) => p.problem)));
  const validation = drawProblems(sizes.validation, VALIDATION_SEED, new Set([...heldout, ...train].map((p) => p.problem)));
  const sft = drawProblems(sizes.sft, SFT_SEED, new Set([...heldout, ...train, ...validation].map((p) => p.problem)));
  return { heldout, train, validation, sft };
}

/** The warm-start records: the SFT problems as the teacher writes them (seeded). */
export function sftRecords(
  problems: readonly ArithProblem[],
  seed = SFT_SEED,
): Array<{ problem: string; answer: string; solution: string }> {
  const random = new SeededRandom(seed);
  return problems.map((p) => ({ problem: p.problem, answer: p.answer, solution: random.next() < WORKED_SHARE ? p.worked : p.solution }));
}

function jsonl(records: object[]): string {
  return `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { sft: { type: "string" }, "sft-count": { type: "string", default: "2500" } },
  });
  const sets = arithDataSets({ heldout: 200, train: 800, validation: 300, sft: Number(values["sft-count"]) });
  const question = ({ problem, answer }: ArithProblem) => ({ problem, answer });
  writeFileSync("examples/arith-heldout.jsonl", jsonl(sets.heldout.map(question)));
  writeFileSync("examples/arith.jsonl", jsonl(sets.train.map(question)));
  writeFileSync("examples/arith-validation.jsonl", jsonl(sets.validation.map(question)));
  if (values.sft) writeFileSync(values.sft, jsonl(sftRecords(sets.sft)));
  process.stdout.write(
    `heldout ${sets.heldout.length}, train ${sets.train.length}, validation ${sets.validation.length}` +
      `${values.sft ? `, sft ${sets.sft.length} -> ${values.sft}` : ""}\n`,
  );
}
