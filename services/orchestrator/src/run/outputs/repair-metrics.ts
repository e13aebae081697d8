// What repair mode adds to a step's metrics and to a held-out evaluation: how often the
// first attempt was right, how often a second (or later) attempt repaired a wrong one, and
// how many attempts trajectories took. heldout_accuracy keeps one meaning in every mode (the
// first greedy attempt, as `lean-grpo eval --k 1` measures it); the last turn's is its own metric.
import type { RolloutGroup } from "../rollout/rollout.js";
import type { EvalRecord } from "./eval-record.js";

/** Share of `part` in `whole`, 0 when there is none. */
const share = (part: number, whole: number) => (whole > 0 ? part / whole : 0);

export function repairStepMetrics(rolled: readonly RolloutGroup[]): Record<string, number> {
  const groups = rolled.filter((g) => g.repair);
  if (groups.length === 0) return {};
  const turns = groups.flatMap((g) => g.repair!.turns);
  const first = groups.flatMap((g) => g.repair!.solvedFirst);
  const solved = groups.flatMap((g) => g.solved);
  const retried = turns.filter((t) => t > 1).length;
  const repaired = solved.filter((s, i) => s && !first[i]).length;
  return {
    pass_rate_turn1: share(first.filter(Boolean).length, first.length),
    repair_turns_mean: share(
      turns.reduce((a, b) => a + b, 0),
      turns.length,
    ),
    repair_attempts: retried,
    // Of the trajectories whose first attempt was wrong, the share that a later attempt put right.
    repair_success_rate: share(repaired, retried),
  };
}

export function repairHeldoutMetrics(record: EvalRecord): Record<string, number> {
  const r = record.repair;
  if (!r) return {};
  return {
    heldout_accuracy_turn1: r.accuracy_turn1,
    heldout_accuracy_last_turn: r.accuracy_last_turn,
    heldout_repair_success_rate: share(r.repaired, r.second_attempts),
  };
}

/** The evaluation log line's repair part: accuracy after the last turn and how many second attempts were right. */
export function repairEvalSummary(record: EvalRecord): string {
  const r = record.repair;
  if (!r) return "";
  return `; after ${r.max_turns} turns ${(100 * r.accuracy_last_turn).toFixed(1)}% (${r.repaired} of ${r.second_attempts} wrong first answers put right)`;
}
