// The sampling distribution of a step or a ComputeLogprobs call, from the contract's
// SamplingDistribution (TrainStepHeader.sampling, ComputeLogprobsRequest.sampling) and the
// older single temperatures (algorithm_config.temperature, ComputeLogprobsRequest.temperature):
// the one place the learner reads them. Temperature 0 means what it means to the sampler,
// greedy decoding: the sampler reports the greedy token's logprob under the untruncated
// temperature-1 distribution, so the learner scores under that one. When a message and an
// older temperature are both given they must agree, otherwise the request is refused naming
// both, never trained on one of them quietly.
import type { ReasoningMaskMode, SamplingDistribution } from "@lean-grpo/lm";
import { AlgorithmConfigError } from "../algorithms/algorithm-config-error.js";

/** The contract's message (temperature 0: greedy; top_p 0: unset, i.e. 1). */
export interface SamplingMessage {
  temperature: number;
  topK: number;
  topP: number;
  /** ReasoningMask: 0 unspecified (the learner's model.reasoning_mask), 1 free, 2 gated, 3 strict. */
  reasoningMask?: number;
}

/** A distribution with the reasoning mask the request named (undefined: the learner's configured one). */
export type ResolvedSampling = SamplingDistribution & { reasoningMask?: ReasoningMaskMode };

const MASK_MODES: Record<number, ReasoningMaskMode | undefined> = { 0: undefined, 1: "free", 2: "gated", 3: "strict" };

/** Two temperatures sent as float32 and double agree to this relative error. */
const FLOAT32_AGREEMENT = 1e-6;

/** What greedy decoding is scored under: the full distribution at temperature 1. */
const GREEDY: SamplingDistribution = { temperature: 1, topK: 0, topP: 1 };

function agree(a: number, b: number): boolean {
  return Math.abs(a - b) <= FLOAT32_AGREEMENT * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * The distribution to score under. `sampling` is the message as received (undefined when
 * the field is absent); `legacy` the older temperature and where it came from (undefined
 * when not given). Throws AlgorithmConfigError naming the fields.
 */
export function resolveSampling(
  sampling: SamplingMessage | undefined,
  legacy: { temperature: number; field: string } | undefined,
  field: string,
): ResolvedSampling {
  if (sampling === undefined) return legacy === undefined ? GREEDY : { ...GREEDY, temperature: legacy.temperature };
  const { temperature, topK, topP } = sampling;
  const mask = sampling.reasoningMask ?? 0;
  if (!(mask in MASK_MODES)) {
    throw new AlgorithmConfigError(`${field}.reasoning_mask is ${mask}; accepted: REASONING_MASK_FREE, _GATED, _STRICT (or unset)`);
  }
  const reasoningMask = MASK_MODES[mask];
  if (!Number.isFinite(temperature) || temperature < 0) {
    throw new AlgorithmConfigError(`${field}.temperature is ${temperature}; accepted: a number >= 0 (0 is greedy decoding)`);
  }
  if (!Number.isFinite(topP) || topP < 0 || topP > 1) {
    throw new AlgorithmConfigError(`${field}.top_p is ${topP}; accepted: (0, 1] (0 or unset means 1, no truncation)`);
  }
  if (!Number.isInteger(topK) || topK < 0)
    throw new AlgorithmConfigError(`${field}.top_k is ${topK}; accepted: an integer >= 0 (0 keeps all)`);
  const resolved: ResolvedSampling = {
    ...(temperature === 0 ? GREEDY : { temperature, topK, topP: topP === 0 ? 1 : topP }),
    ...(reasoningMask ? { reasoningMask } : {}),
  };
  if (legacy !== undefined && !agree(legacy.temperature, resolved.temperature)) {
    const said = temperature === 0 ? "0 (greedy decoding, scored under temperature 1)" : String(temperature);
    throw new AlgorithmConfigError(
      `${legacy.field} is ${legacy.temperature} but ${field}.temperature is ${said}: they name the same sampling temperature; ` +
        `leave ${legacy.field} out (the ${field} is the one source) or make them agree`,
    );
  }
  return resolved;
}
