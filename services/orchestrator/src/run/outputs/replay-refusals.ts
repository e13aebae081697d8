// Proofs the verifier's REPL called PROVED and its kernel replay refused: an exploit
// the policy found and the verdict caught. Counted per group from the reward results
// (each carries its VerifyResponse), summed per step as `verifier_replay_refusals`,
// and raised as an alarm line in the run's log: a policy that has found a hole keeps
// searching for the next one.
import type { RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";

/** The group's replay refusals; undefined where nothing was verified (math tasks), so math runs report none. */
export function countReplayRefusals(results: readonly RewardResult[]): number | undefined {
  if (!results.some((r) => r.verification !== undefined)) return undefined;
  return results.filter((r) => r.verification?.decidedBy === VerdictTier.REPLAY && r.verification.verdict === Verdict.REJECTED).length;
}

export const REPLAY_REFUSALS_METRIC = "verifier_replay_refusals";

/** The alarm line for a step whose rollouts held replay refusals; undefined when there were none. */
export function replayRefusalAlarm(step: number, metrics: Readonly<Record<string, number>>): string | undefined {
  const refusals = metrics[REPLAY_REFUSALS_METRIC] ?? 0;
  if (refusals <= 0) return undefined;
  return (
    `EXPLOIT CAUGHT at step ${step}: the kernel replay refused ${refusals} proof(s) the REPL called PROVED ` +
    "(rewarded 0; see samples.jsonl and the verifier's log for the proofs)"
  );
}
