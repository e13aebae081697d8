// The algorithm_config keys every clipped-surrogate algorithm shares, with TRL's names
// (grpo-math §10, §15.1) and the seed's names as aliases where they mean the same knob:
// seed `truncated_is` (ART's cap on the importance weight) → importance_sampling_cap,
// seed DrGRPO `clip_low` / `clip_high` (used as 1 − ε / 1 + ε) → epsilon / epsilon_high,
// seed `kl_estimator` values "schulman" → k3, "mse" → k2 (½(logp − ref)²), "abs" → |logp − ref|.
import { AlgorithmConfigError } from "./algorithm-config-error.js";
import type { AlgorithmDefaults } from "./algorithm.js";
import {
  ADVANTAGE_ESTIMATORS,
  IMPORTANCE_SAMPLING_ACTIONS,
  IMPORTANCE_SAMPLING_LEVELS,
  type ImportanceSamplingAction,
  KL_ESTIMATORS,
  LOSS_AGGREGATIONS,
  SCALE_REWARDS,
  type KlEstimator,
  type LossAggregation,
  type LossSettings,
  type RatioLevel,
  type ScaleRewards,
} from "./loss-settings.js";
import type { ParameterSpec, ParameterValue } from "./parameters.js";

const KL_ALIASES: Readonly<Record<string, KlEstimator>> = { schulman: "k3", mse: "k2", abs: "abs" };

export function commonParameters(defaults: Required<AlgorithmDefaults>): ParameterSpec[] {
  return [
    {
      name: "temperature",
      type: "number",
      default: 1,
      above: 0,
      description:
        "sampling temperature, for callers that send no TrainStepHeader.sampling; when the header sets one, this must equal it (or be left out)",
    },
    {
      name: "scale_rewards",
      type: "enum",
      default: defaults.scale_rewards,
      allowed: SCALE_REWARDS,
      description: "advantage = r − group mean, divided by the group's or the batch's Bessel std (+1e-4), or not (none)",
    },
    {
      name: "epsilon",
      type: "number",
      default: defaults.epsilon,
      min: 0,
      max: 1,
      aliases: ["clip_low"],
      description: "lower clip: ratios below 1 − epsilon stop pushing down",
    },
    {
      name: "epsilon_high",
      type: "number",
      default: defaults.epsilon_high,
      min: 0,
      nullable: true,
      aliases: ["clip_high"],
      description: "upper clip: ratios above 1 + epsilon_high stop pushing up; null means = epsilon",
    },
    {
      name: "delta",
      type: "number",
      default: null,
      above: 1,
      nullable: true,
      description: "two-sided clipping: the ratio is capped at delta for negative advantages (INTELLECT-2 used 4); null is off",
    },
    {
      name: "beta",
      type: "number",
      default: defaults.beta,
      min: 0,
      description: "KL coefficient against the reference policy (adapter disabled)",
    },
    {
      name: "kl_estimator",
      type: "enum",
      default: "k3",
      allowed: [...KL_ESTIMATORS, ...Object.keys(KL_ALIASES).filter((k) => k !== "abs")],
      description:
        "k1 = logp − ref, k2 = ½(logp − ref)², k3 = exp(ref − logp) − (ref − logp) − 1, abs = |logp − ref|; seed schulman = k3, mse = k2",
    },
    {
      name: "loss_aggregation",
      type: "enum",
      default: defaults.loss_aggregation,
      allowed: LOSS_AGGREGATIONS,
      description:
        "seq-mean-token-mean (GRPO), token-mean over the batch (DAPO), seq-mean-token-sum-norm (Dr. GRPO: Σ tokens / max_completion_length)",
    },
    {
      name: "max_completion_length",
      type: "integer",
      default: 512,
      min: 1,
      description: "the constant normaliser of seq-mean-token-sum-norm (the generation budget)",
    },
    {
      name: "mask_truncated_completions",
      type: "boolean",
      default: false,
      description: "completions cut by max_tokens leave the loss (they still count in the advantages)",
    },
    {
      name: "importance_sampling_cap",
      type: "number",
      default: null,
      above: 0,
      nullable: true,
      aliases: ["truncated_is"],
      description:
        "rollout correction against the sampler (TRL vllm_importance_sampling_cap, verl rollout_is_threshold): upper bound of the weight exp(old − sampler logprob); null turns the correction off",
    },
    {
      name: "importance_sampling_min",
      type: "number",
      default: null,
      min: 0,
      nullable: true,
      description: "rollout correction: lower bound of the weight (TRL vllm_importance_sampling_clip_min); null is none",
    },
    {
      name: "importance_sampling_level",
      type: "enum",
      default: "sequence",
      allowed: IMPORTANCE_SAMPLING_LEVELS,
      description: "rollout correction: one weight per token, or per sequence = exp(Σ (old − sampler)) (TRL's default, sequence)",
    },
    {
      name: "importance_sampling_action",
      type: "enum",
      default: "mask",
      allowed: IMPORTANCE_SAMPLING_ACTIONS,
      description:
        "rollout correction: a weight out of bounds is clamped to them (truncate) or zeroed, leaving the loss (mask, TRL's default)",
    },
    {
      name: "num_iterations",
      type: "integer",
      default: 1,
      min: 1,
      max: 64,
      description: "μ: optimizer updates on the same batch, ratios against the logprobs taken before the first",
    },
    {
      name: "advantage_estimator",
      type: "enum",
      default: "grpo",
      allowed: ADVANTAGE_ESTIMATORS,
      description:
        "grpo: r − group mean; passk: the pass@k leave-one-out advantage (Tang et al. 2503.19595; verl grpo_passk when pass_k = the group size), then scale_rewards",
    },
    {
      name: "pass_k",
      type: "integer",
      default: null,
      min: 2,
      nullable: true,
      description: "k of advantage_estimator passk (2 ≤ k ≤ the group size); null is the group size (verl's grpo_passk)",
    },
  ];
}

/** The common keys without the PPO clip (epsilon, epsilon_high, delta): for objectives that do not clip. */
export function unclippedParameters(defaults: Required<AlgorithmDefaults>): ParameterSpec[] {
  return commonParameters(defaults).filter((p) => !["epsilon", "epsilon_high", "delta"].includes(p.name));
}

function asKlEstimator(value: ParameterValue): KlEstimator {
  const name = String(value);
  const estimator = (KL_ESTIMATORS as readonly string[]).includes(name) ? (name as KlEstimator) : KL_ALIASES[name];
  if (!estimator) throw new AlgorithmConfigError(`kl_estimator ${JSON.stringify(value)} is not known`);
  return estimator;
}

/** LossSettings from the common keys; the algorithm adds or fixes the rest. */
export function commonSettings(values: Record<string, ParameterValue>): LossSettings {
  // CISPO and SAPO have no clip range (their own knobs replace epsilon and epsilon_high).
  const epsilon = (values.epsilon as number | undefined) ?? 0;
  return {
    objective: "clip",
    cispoRatioCap: 0,
    sapoTemperaturePositive: 0,
    sapoTemperatureNegative: 0,
    temperature: values.temperature as number,
    topK: 0,
    topP: 1,
    scaleRewards: values.scale_rewards as ScaleRewards,
    advantageEstimator: values.advantage_estimator === "passk" ? { kind: "passk", k: values.pass_k as number | null } : { kind: "grpo" },
    advantageEpsilon: 1e-4,
    level: "token",
    epsilonLow: epsilon,
    epsilonHigh: (values.epsilon_high as number | null | undefined) ?? epsilon,
    delta: (values.delta as number | null | undefined) ?? null,
    beta: values.beta as number,
    klEstimator: asKlEstimator(values.kl_estimator!),
    aggregation: values.loss_aggregation as LossAggregation,
    maxCompletionLength: values.max_completion_length as number,
    maskTruncatedCompletions: values.mask_truncated_completions as boolean,
    importanceSamplingCap: values.importance_sampling_cap as number | null,
    importanceSamplingMin: values.importance_sampling_min as number | null,
    importanceSamplingLevel: values.importance_sampling_level as RatioLevel,
    importanceSamplingAction: values.importance_sampling_action as ImportanceSamplingAction,
    dynamicSampling: false,
    dpoCoef: 0,
    dpoBeta: 0,
    numIterations: values.num_iterations as number,
  };
}
