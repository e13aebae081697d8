// The RewardSpec a run's ScoreGroup calls carry: its preset and scorer overrides, or nothing
// (the reward service's configured reward) when the run names neither.
import type { JsonObject } from "@bufbuild/protobuf";
import type { RunConfig } from "./run-config.js";

export function rewardSpec(config: RunConfig) {
  const { preset, scorers } = config.reward;
  if (!preset && scorers.length === 0) return {};
  return { spec: { preset, scorers: scorers.map((s) => ({ name: s.name, weight: s.weight, params: s.params as JsonObject })) } };
}
