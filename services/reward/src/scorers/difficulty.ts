// difficulty: pays for solving hard tasks, by the dataset's difficulty or by how
// few of the group solved the task. It never looks at the completion itself
// (the seed guessed difficulty from the model's own trajectory length, which
// paid for long failing attempts).
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { enumParam, numberParam } from "../reward/params.js";
import { defineScorer } from "../reward/scorer.js";

export const difficultyScorer = defineScorer({
  name: "difficulty",
  description:
    "Both tasks, solved only (0 otherwise). source dataset: theorem.difficulty in [0, 1] (`missing` when the dataset " +
    "gives none). source pass_rate: 1 - the fraction of the group that solved the task; needs ScoreGroup.",
  tasks: [TaskKind.LEAN_PROOF, TaskKind.MATH_ANSWER],
  groupLevel: true,
  params: {
    source: enumParam({ values: ["dataset", "pass_rate"], default: "dataset", description: "Where the difficulty comes from." }),
    missing: numberParam({
      default: 0.5,
      min: 0,
      max: 1,
      description: "source dataset: the difficulty assumed when theorem.difficulty is unset.",
    }),
  },
  bounds: () => ({ solved: [0, 1], unsolved: [0, 0] }),
  score(evidence, p, group) {
    if (p.source === "pass_rate") {
      if (!group) {
        throw new ConnectError(
          'scorer difficulty with source "pass_rate" needs the whole group: call ScoreGroup, or use source "dataset"',
          Code.InvalidArgument,
        );
      }
      if (!evidence.solved) return { value: 0, detail: "not solved" };
      const passRate = group.solved / group.size;
      return { value: 1 - passRate, detail: `solved by ${group.solved} of ${group.size}` };
    }
    const difficulty = evidence.theorem.difficulty;
    if (difficulty !== undefined && !(difficulty >= 0 && difficulty <= 1)) {
      throw new ConnectError(`theorem.difficulty is ${difficulty}; accepted: a number in [0, 1], or unset`, Code.InvalidArgument);
    }
    if (!evidence.solved) return { value: 0, detail: "not solved" };
    return difficulty === undefined
      ? { value: p.missing, detail: `solved; dataset gives no difficulty, assumed ${p.missing}` }
      : { value: difficulty, detail: `solved; dataset difficulty ${difficulty}` };
  },
});
