// The RewardSpec a run's Score and ScoreGroup calls carry: its preset and scorer overrides
// (none: the reward service's configured reward) and the run's generation budget. The
// reward service owns length shaping and derives it from that budget (the `length`
// scorer's max_tokens and soft zone), so the run never rewrites the reward's parameters.
import type { JsonObject } from "@bufbuild/protobuf";
import type { RunConfig } from "./run-config.js";

export function rewardSpec(config: RunConfig) {
  const { preset, scorers } = config.reward;
  return {
    spec: {
      preset,
      scorers: scorers.map((s) => ({ name: s.name, weight: s.weight, params: s.params as JsonObject })),
      maxCompletionTokens: scoredCompletionBudget(config),
    },
  };
}

/**
 * The most tokens a scored completion can hold. Whole-proof mode scores one Generate's
 * completion (training.max_tokens); tactic mode scores the assembled proof, every turn's
 * tokens together (tactic-rollout.ts proofCompletion), at most max_proof_steps turns.
 */
export function scoredCompletionBudget(config: RunConfig): number {
  const { max_tokens: maxTokens, mode, max_proof_steps: turns } = config.training;
  return mode === "tactic" ? maxTokens * turns : maxTokens;
}
