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
      maxCompletionTokens: config.training.max_tokens,
    },
  };
}
