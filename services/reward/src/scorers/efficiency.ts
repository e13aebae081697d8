// efficiency: a bonus for short proofs, paid only when proved. Shortness is the
// verifier's tactic count, so comments and layout change nothing and padding a
// proof with tactics lowers its bonus.
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { integerParam } from "../reward/params.js";
import { defineScorer, leanEvidence } from "../reward/scorer.js";

export const efficiencyScorer = defineScorer({
  name: "efficiency",
  description:
    "Lean tasks, proved only (0 otherwise). min(1, target_tactics / tactics), tactics being the verifier's " +
    "progress.tactics_total (a term proof, with none, gets 1).",
  tasks: [TaskKind.LEAN_PROOF],
  groupLevel: false,
  params: {
    target_tactics: integerParam({ default: 3, min: 1, description: "Proofs with at most this many tactics get the full bonus of 1." }),
  },
  bounds: () => ({ solved: [0, 1], unsolved: [0, 0] }),
  score(evidence, p) {
    if (!evidence.solved) return { value: 0, detail: "not proved" };
    const tactics = leanEvidence(evidence).verification?.progress?.tacticsTotal ?? 0;
    if (tactics === 0) return { value: 1, detail: "proved with no tactics (term proof)" };
    return { value: Math.min(1, p.target_tactics / tactics), detail: `proved in ${tactics} tactics (target ${p.target_tactics})` };
  },
});
