// The run's model.reasoning_mask as the contract's ReasoningMask: every request that samples or
// scores (rollouts, held-out evaluation, preflight, TrainStep) carries the same one.
import { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { RunConfig } from "./run-config.js";

export function reasoningMaskOf(config: RunConfig): ReasoningMask {
  const mode = config.model.reasoning_mask;
  return mode === "gated" ? ReasoningMask.GATED : mode === "strict" ? ReasoningMask.STRICT : ReasoningMask.FREE;
}
