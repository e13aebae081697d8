// SAPO (Qwen, Soft Adaptive Policy Optimization, arXiv 2511.20347): the hard clip is replaced by a
// sigmoid gate f(r) = σ(τ(r − 1))·4/τ on each token's ratio, with τ_pos = 1.0 for positive and
// τ_neg = 1.05 for non-positive advantages (TRL's defaults, loss_type="sapo"): off-policy tokens
// are damped smoothly instead of dropped, and on-policy (r = 1) the gradient equals GRPO's.
// The paper's GRPO form: per-sequence token mean, averaged over sequences; no KL.
import { defineAlgorithm } from "./algorithm.js";
import { commonSettings, unclippedParameters } from "./common-parameters.js";

export const sapo = defineAlgorithm({
  name: "sapo",
  title: "Soft Adaptive Policy Optimization",
  summary:
    "A temperature-controlled sigmoid gate on each token's ratio replaces the hard clip: off-policy tokens are " +
    "attenuated smoothly (faster for negative advantages), keeping a signal the clip would drop; no KL.",
  parameters: [
    ...unclippedParameters({ scale_rewards: "group", epsilon: 0, epsilon_high: null, beta: 0, loss_aggregation: "seq-mean-token-mean" }),
    {
      name: "sapo_temperature_pos",
      type: "number",
      default: 1.0,
      above: 0,
      description: "τ of the gate σ(τ(r − 1))·4/τ for tokens of positive advantage",
    },
    {
      name: "sapo_temperature_neg",
      type: "number",
      default: 1.05,
      above: 0,
      description: "τ of the gate for tokens of non-positive advantage (larger: damped faster)",
    },
  ],
  settings: (values) => ({
    ...commonSettings(values),
    objective: "sapo",
    sapoTemperaturePositive: values.sapo_temperature_pos as number,
    sapoTemperatureNegative: values.sapo_temperature_neg as number,
  }),
});
