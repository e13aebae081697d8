// DGPO as the seed names it: GRPO plus a DPO-style pairwise term. In each group the best
// and the worst completion (by reward) form a pair, and the term is
// −log σ(dpo_beta · [(log π(best) − log π_ref(best)) − (log π(worst) − log π_ref(worst))]),
// averaged over pairs and added with weight dpo_coef. This is the seed's `use_dpo_loss`,
// `dpo_beta`, `dpo_coef` made real: the seed never supplied its pairs (seed review §2.2).
// The LLM transcription of Luo et al.'s diffusion DGPO (grpo-math §11.1) is related: both
// push the policy's implicit reward apart between a group's better and worse answers.
import { defineAlgorithm } from "./algorithm.js";
import { commonParameters, commonSettings } from "./common-parameters.js";
import { GRPO_DEFAULTS } from "./grpo.js";

export const dgpo = defineAlgorithm({
  name: "dgpo",
  title: "GRPO with a Direct (DPO) pairwise preference term",
  summary:
    "GRPO plus, per group, a DPO loss between the best and the worst completion against the reference: " +
    "a sharper contrast when a group holds both a proof and a failure.",
  parameters: [
    ...commonParameters(GRPO_DEFAULTS),
    { name: "use_dpo_loss", type: "boolean", default: true, description: "add the pairwise DPO term" },
    { name: "dpo_beta", type: "number", default: 0.1, above: 0, description: "β of the DPO term (scale of the implicit reward)" },
    { name: "dpo_coef", type: "number", default: 0.5, min: 0, description: "weight of the DPO term added to the GRPO loss" },
  ],
  settings: (values) => ({
    ...commonSettings(values),
    dpoCoef: values.use_dpo_loss ? (values.dpo_coef as number) : 0,
    dpoBeta: values.dpo_beta as number,
  }),
});
