// GRPO (DeepSeekMath, arXiv 2402.03300): group-normalised advantages, token-level clipped
// surrogate with ε = 0.2, each sequence's token mean averaged over sequences, and a k3 KL
// to the reference with β = 0.04 (grpo-math §2.1, §4.1, §5, §13).
import { defineAlgorithm } from "./algorithm.js";
import { commonParameters, commonSettings } from "./common-parameters.js";

export const GRPO_DEFAULTS = {
  scale_rewards: "group",
  epsilon: 0.2,
  epsilon_high: null,
  beta: 0.04,
  loss_aggregation: "seq-mean-token-mean",
};

export const grpo = defineAlgorithm({
  name: "grpo",
  title: "Group Relative Policy Optimization",
  summary:
    "DeepSeekMath's algorithm: advantages normalised within each prompt's group, token-level clipped ratios, " +
    "per-sequence token means averaged over sequences, k3 KL to the reference (β = 0.04). The baseline of the family.",
  parameters: commonParameters(GRPO_DEFAULTS),
  settings: commonSettings,
});
