// CISPO (MiniMax-M1, arXiv 2506.13585, eq. 4–5): the importance weight is clipped and made a
// constant (stop-gradient) multiplying −A·log π, so no token loses its gradient to the clip, as
// PPO's min() drops them; only the upper side is truncated, at ε_max = 5 (ScaleRL, arXiv
// 2510.13786; TRL loss_type="cispo" with epsilon_high = 5.0). Token-level mean over the whole
// batch (the paper's 1 / Σ|o_i| normaliser), no KL.
import { defineAlgorithm } from "./algorithm.js";
import { commonSettings, unclippedParameters } from "./common-parameters.js";

export const cispo = defineAlgorithm({
  name: "cispo",
  title: "Clipped IS-weight Policy Optimization",
  summary:
    "The clipped importance weight is a stop-gradient coefficient on −A·log π: every token, rare reflective ones " +
    "included, keeps its gradient; only ratios above epsilon_max (5) are truncated; token mean over the batch; no KL.",
  parameters: [
    ...unclippedParameters({ scale_rewards: "group", epsilon: 0, epsilon_high: null, beta: 0, loss_aggregation: "token-mean" }),
    {
      name: "epsilon_max",
      type: "number",
      default: 5,
      above: 0,
      description: "the weight sg(min(π / π_old, epsilon_max)) (ScaleRL's ε_max; TRL's epsilon_high for cispo)",
    },
  ],
  settings: (values) => ({ ...commonSettings(values), objective: "cispo", cispoRatioCap: values.epsilon_max as number }),
});
