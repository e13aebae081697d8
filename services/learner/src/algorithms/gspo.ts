// GSPO (Qwen, arXiv 2507.18071): one importance ratio per sequence, the geometric mean of
// its token ratios exp(mean_t log(π/π_old)), clipped at the sequence level with a tiny
// range (3e-4 / 4e-4), averaged over sequences; no KL (grpo-math §9). On-policy (μ = 1,
// one update per batch) its gradient equals GRPO's; it matters once training goes off-policy.
// With importance_sampling_cap the sampler correction is the shared rollout correction
// (rollout-correction.ts), at token or sequence level, as for every algorithm.
import { defineAlgorithm } from "./algorithm.js";
import { commonParameters, commonSettings } from "./common-parameters.js";

export const gspo = defineAlgorithm({
  name: "gspo",
  title: "Group Sequence Policy Optimization",
  summary:
    "Sequence-level importance ratio (length-normalised geometric mean of token ratios) and sequence-level " +
    "clipping at 3e-4 / 4e-4: stable off-policy updates (num_iterations > 1), notably for MoE models; no KL.",
  parameters: commonParameters({
    scale_rewards: "group",
    epsilon: 3e-4,
    epsilon_high: 4e-4,
    beta: 0,
    loss_aggregation: "seq-mean-token-mean",
  }),
  settings: (values) => ({ ...commonSettings(values), level: "sequence" }),
});
