// The sampling distribution of a step or a ComputeLogprobs call, from the contract's
// SamplingDistribution (TrainStepHeader.sampling, ComputeLogprobsRequest.sampling) and the
// older single temperatures (algorithm_config.temperature, ComputeLogprobsRequest.temperature).
// One source: when both are given they must agree, otherwise the request is refused naming
// both, never trained on one of them quietly.
import type { SamplingDistribution } from "@lean-grpo/lm";
import { AlgorithmConfigError } from "../algorithms/algorithm-config-error.js";

/** The contract's message (0 = unset: temperature 1, no top-k, top-p 1). */
export interface SamplingMessage {
  temperature: number;
  topK: number;
  topP: number;
}

/** Two temperatures sent as float32 and double agree to this relative error. */
const FLOAT32_AGREEMENT = 1e-6;

function agree(a: number, b: number): boolean {
  return Math.abs(a - b) <= FLOAT32_AGREEMENT * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * The distribution to score under. `sampling` is the message as received (undefined when
 * the field is absent); `legacy` the other temperature and where it came from (undefined
 * when not given). Throws AlgorithmConfigError naming the fields.
 */
export function resolveSampling(
  sampling: SamplingMessage | undefined,
  legacy: { temperature: number; field: string } | undefined,
  field: string,
): SamplingDistribution {
  const header = sampling ?? { temperature: 0, topK: 0, topP: 0 };
  const { temperature, topK, topP } = header;
  if (!Number.isFinite(temperature) || temperature < 0) {
    throw new AlgorithmConfigError(`${field}.temperature is ${temperature}; accepted: a number > 0 (0 or unset means 1)`);
  }
  if (!Number.isFinite(topP) || topP < 0 || topP > 1) {
    throw new AlgorithmConfigError(`${field}.top_p is ${topP}; accepted: (0, 1] (0 or unset means 1, no truncation)`);
  }
  if (!Number.isInteger(topK) || topK < 0)
    throw new AlgorithmConfigError(`${field}.top_k is ${topK}; accepted: an integer >= 0 (0 keeps all)`);
  let resolved = temperature === 0 ? 1 : temperature;
  if (legacy !== undefined) {
    if (temperature === 0) resolved = legacy.temperature;
    else if (!agree(legacy.temperature, temperature)) {
      throw new AlgorithmConfigError(
        `${legacy.field} is ${legacy.temperature} but ${field}.temperature is ${temperature}: they name the same sampling temperature; ` +
          `leave ${legacy.field} out (the ${field} is the one source) or make them equal`,
      );
    }
  }
  return { temperature: resolved, topK, topP: topP === 0 ? 1 : topP };
}
