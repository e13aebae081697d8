// The verdict once the replay tier has had its say. With `repl.replay: proved` only
// what the REPL would call PROVED is replayed, and only a replay that agrees makes it
// PROVED; any other outcome decides against the proof, fail closed. With `always`
// every elaborated proof is replayed, and a REPL refusal still decides (a replay that
// accepts it is logged: the two tiers disagree).
import { Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ReplConfig } from "../config.js";
import type { Judgement } from "../verdict/classify-verdict.js";
import type { CheckedSource } from "../verdict/proof-source.js";
import type { TheoremTarget } from "../verdict/theorem-target.js";
import type { ReplayChecker } from "./replay-checker.js";

export interface Decision {
  verdict: Verdict;
  decidedBy: VerdictTier;
  reason: string;
  axioms: string[];
  replayMs: number;
}

export async function decideWithReplay(
  judgement: Judgement,
  target: TheoremTarget,
  source: CheckedSource,
  mode: ReplConfig["replay"],
  replay: ReplayChecker | undefined,
  signal: AbortSignal,
): Promise<Decision> {
  const repl: Decision = {
    verdict: judgement.verdict,
    decidedBy: VerdictTier.REPL,
    reason: judgement.reason,
    axioms: judgement.axioms,
    replayMs: 0,
  };
  const proved = judgement.verdict === Verdict.PROVED;
  if (mode === "off" || !replay || (mode === "proved" && !proved)) return repl;

  const outcome = await replay.check(target, source, signal);
  const replayMs = outcome.ms;
  if (!proved) {
    if (outcome.kind === "accepted") replay.recordDisagreement(target, judgement.reason);
    return { ...repl, replayMs };
  }
  switch (outcome.kind) {
    case "accepted":
      return { ...repl, decidedBy: VerdictTier.REPLAY, reason: "proved (the kernel replay in a fresh process agrees)", replayMs };
    case "refused":
      replay.recordRefusalAfterProved(target, outcome.reason);
      return {
        verdict: Verdict.REJECTED,
        decidedBy: VerdictTier.REPLAY,
        reason: `the kernel replay refused a proof the REPL accepted: ${outcome.reason}`,
        axioms: judgement.axioms,
        replayMs,
      };
    case "failed":
      return {
        verdict: Verdict.ERROR,
        decidedBy: VerdictTier.REPLAY,
        reason: `the kernel replay could not check the proof, so it is not PROVED: ${outcome.reason}`,
        axioms: judgement.axioms,
        replayMs,
      };
    case "timeout":
      return {
        verdict: Verdict.TIMEOUT,
        decidedBy: VerdictTier.REPLAY,
        reason: `the kernel replay ran past its time limit (repl.replay_checker.timeout_ms); not PROVED`,
        axioms: judgement.axioms,
        replayMs,
      };
  }
}
