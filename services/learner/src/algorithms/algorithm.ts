// The shared shape of a GRPO-family algorithm: a name, what it is for, its algorithm_config
// keys, and how those keys resolve to loss settings. The losses themselves are shared
// (policy-loss.ts); an algorithm is the point in the knob space that the literature
// defines (grpo-math §13), with the knobs a caller may still turn.
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
    resolve: (config) => definition.settings(resolveParameters(definition.name, definition.parameters, config)),
  };
}
