// Dr. GRPO ("Understanding R1-Zero-Like Training", arXiv 2503.20783): GRPO without the
// std division in the advantage and without 1/|o_i|; sequences are summed over tokens and
// divided by a constant (the generation budget), and β = 0 (grpo-math §7).
import { defineAlgorithm } from "./algorithm.js";
import { commonParameters, commonSettings } from "./common-parameters.js";

export const drgrpo = defineAlgorithm({
  name: "drgrpo",
  title: "Dr. GRPO (GRPO Done Right)",
  summary:
    "Removes GRPO's two biases: no std scaling of advantages (question difficulty) and no per-response length " +
    "normalisation (wrong answers growing longer); token sums over a constant max_completion_length; no KL.",
  parameters: commonParameters({
    scale_rewards: "none",
    epsilon: 0.2,
    epsilon_high: null,
    beta: 0,
    loss_aggregation: "seq-mean-token-sum-norm",
  }),
  settings: commonSettings,
});
