// DAPO (ByteDance, arXiv 2503.14476): clip-higher (ε_low 0.2, ε_high 0.28), token mean over
// the whole batch, no KL, and dynamic sampling: groups whose rewards are all equal carry no
// signal; they are reported (zero_std_groups) so the caller can resample, and leave the
// batch, so they do not dilute the token mean (grpo-math §8). Overlong reward shaping is a
// reward, not a loss: the reward service applies it.
import { defineAlgorithm } from "./algorithm.js";
import { commonParameters, commonSettings } from "./common-parameters.js";

export const dapo = defineAlgorithm({
  name: "dapo",
  title: "Decoupled Clip and Dynamic sAmpling Policy Optimization",
  summary:
    "Long chain-of-thought RL without entropy collapse: clip-higher (0.2 / 0.28) lets rare tokens grow, " +
    "a token-level loss over the whole batch weights long answers fully, groups with no reward spread are dropped " +
    "(dynamic sampling) and reported for resampling; no KL.",
  parameters: [
    ...commonParameters({ scale_rewards: "group", epsilon: 0.2, epsilon_high: 0.28, beta: 0, loss_aggregation: "token-mean" }),
    {
      name: "dynamic_sampling",
      type: "boolean",
      default: true,
      description: "groups whose rewards are all equal leave the batch (they are still reported in zero_std_groups)",
    },
  ],
  settings: (values) => ({ ...commonSettings(values), dynamicSampling: values.dynamic_sampling as boolean }),
});
