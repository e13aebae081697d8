// The algorithm code names the header's fields as TrainStepHeader has them (`algorithm`,
// `algorithm_config.beta`); in a TrainStep request they sit under `header`, and a message
// names a field by its path in the request (tests/conformance/learner/bad-input.spec.ts).
import { AlgorithmConfigError } from "../algorithms/algorithm-config-error.js";

/** `error` with its field path rooted at the request: "header.algorithm_config.beta = ...". */
export function underHeader(error: unknown): unknown {
  if (!(error instanceof AlgorithmConfigError) || error.message.startsWith("header.")) return error;
  return new AlgorithmConfigError(`header.${error.message}`);
}
