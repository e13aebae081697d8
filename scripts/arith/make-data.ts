// Writes the arithmetic data sets, disjoint from each other:
//   examples/arith-heldout.jsonl  held-out evaluation problems ({problem, answer})
//   examples/arith.jsonl          the RL training set ({problem, answer})
//   --sft FILE                    warm-start data for `lean-grpo sft` ({problem, answer, solution}),
//                                 written worked out, boxed or plain (WORKED_SHARE, BOXED_SHARE)
//   npx tsx scripts/arith/make-data.ts [--sft FILE] [--sft-count N]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SeededRandom } from "@lean-grpo/random";
import { drawProblems, plainSolution, type ArithProblem } from "./arith-problems.js";

export const HELDOUT_SEED = 1;
export const TRAIN_SEED = 2;
export const SFT_SEED = 3;
/**
 * The warm start's teacher is always right but inconsistent in form, like most SFT data:
 * WORKED_SHARE of its answers are worked out (tens, then units), the rest direct, and of
 * the direct ones only BOXED_SHARE put the answer in \boxed{}. The math verifier accepts
 * boxed answers only, so the warm-started model is often right in a form that earns
 * nothing; GRPO with the verifier's reward has to settle it on the accepted form.
 */
export const WORKED_SHARE = 0.3;
export const BOXED_SHARE = 0.5;

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

/** The warm-start records: the SFT problems as the teacher writes them (seeded). */
export function sftRecords(
  problems: readonly ArithProblem[],
  seed = SFT_SEED,
): Array<{ problem: string; answer: string; solution: string }> {
  const random = new SeededRandom(seed);
  return problems.map((p) => {
    const worked = random.next() < WORKED_SHARE;
    const boxed = random.next() < BOXED_SHARE;
    return { problem: p.problem, answer: p.answer, solution: worked ? p.worked : boxed ? p.solution : plainSolution(p) };
  });
}

function jsonl(records: object[]): string {
  return `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { sft: { type: "string" }, "sft-count": { type: "string", default: "2500" } } });
  const sets = arithDataSets({ heldout: 200, train: 800, sft: Number(values["sft-count"]) });
  const question = ({ problem, answer }: ArithProblem) => ({ problem, answer });
  writeFileSync("examples/arith-heldout.jsonl", jsonl(sets.heldout.map(question)));
  writeFileSync("examples/arith.jsonl", jsonl(sets.train.map(question)));
  if (values.sft) writeFileSync(values.sft, jsonl(sftRecords(sets.sft)));
  process.stdout.write(
    `heldout ${sets.heldout.length}, train ${sets.train.length}${values.sft ? `, sft ${sets.sft.length} -> ${values.sft}` : ""}\n`,
  );
}
