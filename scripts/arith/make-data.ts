// Writes the arithmetic data sets, disjoint from each other:
//   examples/arith-heldout.jsonl  held-out evaluation problems ({problem, answer})
//   examples/arith.jsonl          the RL training set ({problem, answer})
//   --sft FILE                    warm-start data for `lean-grpo sft` ({problem, answer, solution}),
//                                 answered by a teacher that forgets carries and borrows (TEACHER_SLIP)
//   npx tsx scripts/arith/make-data.ts [--sft FILE] [--sft-count N]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SeededRandom } from "@lean-grpo/learner";
import { drawProblems, teacherProblem, type ArithProblem } from "./arith-problems.js";

export const HELDOUT_SEED = 1;
export const TRAIN_SEED = 2;
export const SFT_SEED = 3;
/**
 * How often the warm start's teacher forgets a carry or a borrow (teacherProblem). The
 * warm-started model inherits the slip; GRPO, rewarded by the math verifier, has to unlearn it.
 */
export const TEACHER_SLIP = 0.7;

/** The warm-start records: the SFT problems as the slipping teacher answers them (seeded). */
export function sftRecords(problems: readonly ArithProblem[], slip = TEACHER_SLIP, seed = SFT_SEED): ArithProblem[] {
  const random = new SeededRandom(seed);
  return problems.map((p) => teacherProblem(p, slip, random));
}

export interface ArithDataSets {
  heldout: ArithProblem[];
  train: ArithProblem[];
  sft: ArithProblem[];
}

export function arithDataSets(sizes: { heldout: number; train: number; sft: number }): ArithDataSets {
  const heldout = drawProblems(sizes.heldout, HELDOUT_SEED);
  const train = drawProblems(sizes.train, TRAIN_SEED, new Set(heldout.map((p) => p.problem)));
  const sft = drawProblems(sizes.sft, SFT_SEED, new Set([...heldout, ...train].map((p) => p.problem)));
  return { heldout, train, sft };
}

function jsonl(records: object[]): string {
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { sft: { type: "string" }, "sft-count": { type: "string", default: "2500" } } });
  const sets = arithDataSets({ heldout: 200, train: 800, sft: Number(values["sft-count"]) });
  const question = ({ problem, answer }: ArithProblem) => ({ problem, answer });
  writeFileSync("examples/arith-heldout.jsonl", jsonl(sets.heldout.map(question)));
  writeFileSync("examples/arith.jsonl", jsonl(sets.train.map(question)));
  if (values.sft) writeFileSync(values.sft, jsonl(sftRecords(sets.sft)));
  process.stdout.write(`heldout ${sets.heldout.length}, train ${sets.train.length}${values.sft ? `, sft ${sets.sft.length} -> ${values.sft}` : ""}\n`);
}
