// lean_proof: 1 when the verifier says PROVED. Binary mode gives 0 otherwise;
// shaped mode gives partial credit, always below max_partial < 1, from the
// verifier's progress signals that no-op padding cannot move.
import { Verdict, VerdictTier, type VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { showsSorry } from "../lean/sorry-evidence.js";
import { enumParam, numberParam } from "../reward/params.js";
import { defineScorer, leanEvidence, type ScorerOutput } from "../reward/scorer.js";

/** Verdicts that say nothing about the proof's progress, or that it cheated or stalled: no credit. */
const NO_CREDIT = new Set([Verdict.UNSPECIFIED, Verdict.REJECTED, Verdict.TIMEOUT, Verdict.CRASHED]);

export const leanProofScorer = defineScorer({
  name: "lean_proof",
  description:
    "Lean tasks. 1 when the verifier says PROVED. binary: 0 otherwise. shaped: an unproved proof earns max_partial divided " +
    "by the product of the goals left unsolved, the tactics from the first error on (tactics_total - " +
    "tactics_valid_before_first_error, at least 1 for an ERROR verdict) and the error messages, each counted as at least 1. " +
    "Padding with tactics that do nothing raises tactics_total and tactics_valid_before_first_error alike, so it cannot " +
    "raise the credit. A sorry, REJECTED, TIMEOUT or CRASHED earns 0, and so does anything the kernel replay decided against " +
    "(a proof the REPL accepted and the replay did not). The detail names the tier that decided (screen, repl, replay).",
  tasks: [TaskKind.LEAN_PROOF],
  groupLevel: false,
  params: {
    mode: enumParam({
      values: ["binary", "shaped"],
      default: "binary",
      description: "binary: 1 or 0; shaped: partial credit for unproved proofs.",
    }),
    max_partial: numberParam({
      default: 0.3,
      min: 0,
      max: 1,
      maxExclusive: true,
      description: "shaped: the most an unproved proof can earn; below 1, the value of a proof.",
    }),
  },
  bounds: (params) => ({ solved: [1, 1], unsolved: [0, params.mode === "shaped" ? params.max_partial : 0] }),
  score(evidence, params) {
    const verification = leanEvidence(evidence).verification;
    if (!verification) return { value: 0, detail: "no proof found in the completion" };
    const decidedBy = tierOf(verification);
    if (verification.verdict === Verdict.PROVED) return { value: 1, detail: `proved${decidedBy}` };
    const verdict = `${Verdict[verification.verdict] ?? String(verification.verdict)}${decidedBy}`;
    if (params.mode === "binary") return { value: 0, detail: `${verdict}${verification.reason ? `: ${verification.reason}` : ""}` };
    return shapedCredit(verification, verdict, params.max_partial);
  },
});

/** " (decided by replay)", or "" where the verifier did not say (an older one). */
function tierOf(verification: VerifyResponse): string {
  return verification.decidedBy === VerdictTier.UNSPECIFIED ? "" : ` (decided by ${VerdictTier[verification.decidedBy].toLowerCase()})`;
}

function shapedCredit(verification: VerifyResponse, verdict: string, maxPartial: number): ScorerOutput {
  // What the replay decided against had no progress the REPL's signals could measure honestly.
  if (NO_CREDIT.has(verification.verdict) || verification.decidedBy === VerdictTier.REPLAY) {
    return { value: 0, detail: `${verdict}: no partial credit` };
  }
  if (showsSorry(verification)) return { value: 0, detail: `uses sorry (${verification.sorries.length} listed): no partial credit` };
  const progress = verification.progress;
  const goals = progress?.goalsRemaining ?? verification.goals.length;
  const valid = progress?.tacticsValidBeforeFirstError ?? 0;
  const total = Math.max(progress?.tacticsTotal ?? 0, valid);
  const errors = progress?.errorCount ?? 0;
  // An ERROR has at least one failed step even when the verifier saw no tactic (a parse error).
  const failedTail = verification.verdict === Verdict.ERROR ? Math.max(1, total - valid) : total - valid;
  const value = maxPartial / (Math.max(1, goals) * Math.max(1, failedTail) * Math.max(1, errors));
  return {
    value,
    detail: `${verdict}: ${goals} goals left, ${failedTail} tactics from the first error, ${errors} errors`,
  };
}
