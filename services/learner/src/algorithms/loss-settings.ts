// The knobs of a GRPO-family loss, resolved from an algorithm's defaults and the caller's
// algorithm_config. Every algorithm is a point in this space (grpo-math §13).
import type { ReasoningMaskMode } from "@lean-grpo/lm/reasoning-vocab";

export const SCALE_REWARDS = ["group", "batch", "none"] as const;
export type ScaleRewards = (typeof SCALE_REWARDS)[number];

export const KL_ESTIMATORS = ["k1", "k2", "k3", "abs"] as const;
export type KlEstimator = (typeof KL_ESTIMATORS)[number];

export const LOSS_AGGREGATIONS = ["seq-mean-token-mean", "token-mean", "seq-mean-token-sum-norm"] as const;
export type LossAggregation = (typeof LOSS_AGGREGATIONS)[number];

export type RatioLevel = "token" | "sequence";

/** Rollout correction (TRL vllm_import type { ReasoningMaskMode } from "@lean-grpo/lm/reasoning-vocab";
importance_sampling_mode, verl rollout_is / rollout_rs): the level of the weight and what happens out of bounds. */
export const IMPORTANCE_SAMPLING_LEVELS = ["token", "sequence"] as const;
export const IMPORTANCE_SAMPLING_ACTIONS = ["truncate", "mask"] as const;
export type ImportanceSamplingAction = (typeof IMPORTANCE_SAMPLING_ACTIONS)[number];

/**
 * The per-token policy term: PPO's clipped surrogate (GRPO, DAPO, GSPO, Dr. GRPO, DGPO), CISPO's
 * truncated stop-gradient weight on −A·log π, or SAPO's sigmoid soft gate (policy-loss.ts).
 */
export const POLICY_OBJECTIVES = ["clip", "cispo", "sapo"] as const;
export type PolicyObjective = (typeof POLICY_OBJECTIVES)[number];

/** Group-relative advantages as GRPO (r − group mean) or pass@k's (pass-at-k.ts), k null = the group size. */
export const ADVANTAGE_ESTIMATORS = ["grpo", "passk"] as const;
export type AdvantageEstimator = { kind: "grpo" } | { kind: "passk"; k: number | null };

export interface LossSettings {
  objective: PolicyObjective;
  /** CISPO: the weight sg(min(ratio, cispoRatioCap)) (ScaleRL's ε_max). */
  cispoRatioCap: number;
  /** SAPO: gate temperatures τ for tokens of positive and of non-positive advantage. */
  sapoTemperaturePositive: number;
  sapoTemperatureNegative: number;
  /**
   * The sampling distribution the samples were drawn from (grpo-math §1: logits / T, then
   * top-k, top-p, renormalised): every logprob (policy, old, reference) is taken under it.
   * Set per step from TrainStepHeader.sampling (step-sampling.ts); the temperature falls
   * back to algorithm_config.temperature for callers that send no sampling.
   */
  temperature: number;
  /** 0 keeps every token. */
  topK: number;
  /** 1 keeps every token. */
  topP: number;
  /**
   * The reasoning mask the samples were drawn under (docs/concepts/reasoning-vocabulary.md),
   * applied before the temperature; set per step from TrainStepHeader.sampling. Absent: free.
   */
  reasoningMask?: ReasoningMaskMode;
  /** Divide r − group mean by the group's or the batch's Bessel std (+ advantageEpsilon), or not. */
  scaleRewards: ScaleRewards;
  advantageEstimator: AdvantageEstimator;
  advantageEpsilon: number;
  /** Token ratios (GRPO, DAPO) or the length-normalised sequence ratio (GSPO). */
  level: RatioLevel;
  /** Clip range [1 − epsilonLow, 1 + epsilonHigh]. */
  epsilonLow: number;
  epsilonHigh: number;
  /** Two-sided clipping: the ratio is capped at delta before the min (INTELLECT-2); null is off. */
  delta: number | null;
  /** KL coefficient β against the reference policy (adapter disabled); 0 skips the reference pass. */
  beta: number;
  klEstimator: KlEstimator;
  aggregation: LossAggregation;
  /** Dr. GRPO's constant normaliser (the generation budget). */
  maxCompletionLength: number;
  /** Truncated completions leave the loss (TRL mask_truncated_completions). */
  maskTruncatedCompletions: boolean;
  /**
   * Rollout correction against the sampler's logprobs (rollout-correction.ts): the upper bound of
   * the weight exp(old − sampler); null turns the correction off.
   */
  importanceSamplingCap: number | null;
  /** Lower bound of the weight; null is none. */
  importanceSamplingMin: number | null;
  /** One weight per token, or one per sequence (exp of the summed log ratio, TRL's sequence_*). */
  importanceSamplingLevel: RatioLevel;
  /** Weights out of bounds are clamped to them (truncate) or set to 0 (mask). */
  importanceSamplingAction: ImportanceSamplingAction;
  /** DAPO dynamic sampling: groups with zero reward spread leave the batch. */
  dynamicSampling: boolean;
  /** DGPO's DPO term between the best and worst completion of each group: coefficient (0 is off) and β. */
  dpoCoef: number;
  dpoBeta: number;
  /** μ: optimizer updates on the same batch, ratios taken against the logprobs before the first. */
  numIterations: number;
}
