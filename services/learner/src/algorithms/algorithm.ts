// The shared shape of a GRPO-family algorithm: a name, what it is for, its algorithm_config
// keys, and how those keys resolve to loss settings. The losses themselves are shared
// (policy-loss.ts); an algorithm is the point in the knob space that the literature
// defines (grpo-math §13), with the knobs a caller may still turn.
import { AlgorithmConfigError } from "./algorithm-config-error.js";
import type { LossSettings } from "./loss-settings.js";
import { resolveParameters, type ParameterSpec, type ParameterValue } from "./parameters.js";

export interface Algorithm {
  /** Seed name, e.g. "dapo". */
  name: string;
  title: string;
  summary: string;
  parameters: readonly ParameterSpec[];
  /** Checks algorithm_config and returns the loss settings; throws AlgorithmConfigError naming the key. */
  resolve(config: Readonly<Record<string, unknown>>): LossSettings;
}

/** Defaults that set an algorithm apart; everything else is GRPO's. */
export interface AlgorithmDefaults {
  scale_rewards?: string;
  epsilon?: number;
  epsilon_high?: number | null;
  beta?: number;
  loss_aggregation?: string;
}

/** Builds an algorithm from its own parameter list and a function of the resolved values. */
export function defineAlgorithm(definition: {
  name: string;
  title: string;
  summary: string;
  parameters: readonly ParameterSpec[];
  settings: (values: Record<string, ParameterValue>) => LossSettings;
}): Algorithm {
  return {
    name: definition.name,
    title: definition.title,
    summary: definition.summary,
    parameters: definition.parameters,
    resolve: (config) =>
      refuseInertKnobs(definition.name, config, definition.settings(resolveParameters(definition.name, definition.parameters, config))),
  };
}

/**
 * A knob the caller set that cannot change anything is refused rather than ignored:
 * kl_estimator only shapes the KL term, which β = 0 (drgrpo, dapo and gspo's default) removes;
 * the rollout correction's level, action and lower bound do nothing while importance_sampling_cap is null.
 */
function refuseInertKnobs(algorithm: string, config: Readonly<Record<string, unknown>>, settings: LossSettings): LossSettings {
  if ("kl_estimator" in config && settings.beta === 0) {
    throw new AlgorithmConfigError(
      `algorithm_config sets kl_estimator but beta is 0 for "${algorithm}", so there is no KL term for it to shape; set beta > 0 or leave kl_estimator out`,
    );
  }
  if ("pass_k" in config && settings.advantageEstimator.kind !== "passk") {
    throw new AlgorithmConfigError(
      `algorithm_config sets pass_k but advantage_estimator is "grpo" for "${algorithm}"; set advantage_estimator: passk or leave pass_k out`,
    );
  }
  const correctionKnobs = ["importance_sampling_min", "importance_sampling_level", "importance_sampling_action"].filter((k) => k in config);
  if (correctionKnobs.length > 0 && settings.importanceSamplingCap === null) {
    throw new AlgorithmConfigError(
      `algorithm_config sets ${correctionKnobs.join(", ")} but importance_sampling_cap is null for "${algorithm}", so the rollout correction is off; set importance_sampling_cap (e.g. 2) or leave them out`,
    );
  }
  const { importanceSamplingCap: cap, importanceSamplingMin: min } = settings;
  if (cap !== null && min !== null && !(min < cap)) {
    throw new AlgorithmConfigError(
      `algorithm_config.importance_sampling_min = ${min} is not below importance_sampling_cap = ${cap}; accepted: a lower bound under the cap, or null`,
    );
  }
  return settings;
}
