// The run's algorithm as the learner describes it (ListAlgorithms). The learner owns the
// algorithms, their names and knobs, so the orchestrator keeps no list of its own: it
// checks a run's `algorithm` section against the learner and asks it what "auto" dynamic
// sampling means.
import { Code, ConnectError } from "@connectrpc/connect";
import type { AlgorithmInfo } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import type { MeshClients } from "../mesh-clients.js";
import type { RunConfig } from "./run-config.js";

/**
 * The learner's entry for config.algorithm.name, in any case (the seeds write "DGPO"; the run
 * then uses the learner's spelling); INVALID_ARGUMENT naming what it has when the name or a
 * knob is unknown.
 */
export async function describeAlgorithm(clients: MeshClients, config: RunConfig): Promise<AlgorithmInfo> {
  const { algorithms } = await clients.withRetry("learner", () => clients.learner.listAlgorithms({}));
  const wanted = config.algorithm.name.trim().toLowerCase();
  const algorithm = algorithms.find((a) => a.name.toLowerCase() === wanted);
  if (!algorithm) {
    throw new ConnectError(
      `algorithm.name: the learner has no algorithm "${config.algorithm.name}"; it has: ${algorithms.map((a) => a.name).join(", ")}`,
      Code.InvalidArgument,
    );
  }
  const known = new Set(algorithm.params.flatMap((p) => [p.name, ...p.aliases]));
  const unknown = Object.keys(config.algorithm.config).filter((key) => !known.has(key));
  if (unknown.length > 0) {
    throw new ConnectError(
      `algorithm.config: unknown key${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} for ${algorithm.name}; accepted: ${[...known].join(", ")}`,
      Code.InvalidArgument,
    );
  }
  checkOneTemperature(config);
  checkGenerationBudget(config);
  return algorithm;
}

/** The learner knob that is the generation budget (Dr. GRPO's constant normaliser); the run sends training.max_tokens as it. */
export const GENERATION_BUDGET_KNOB = "max_completion_length";

/** algorithm.config.max_completion_length, if given, must be training.max_tokens: one budget for the sampler, the reward and the loss. */
function checkGenerationBudget(config: RunConfig): void {
  const knob = config.algorithm.config[GENERATION_BUDGET_KNOB];
  if (knob === undefined || knob === config.training.max_tokens) return;
  throw new ConnectError(
    `algorithm.config.${GENERATION_BUDGET_KNOB} is ${JSON.stringify(knob)} but training.max_tokens is ${config.training.max_tokens}: ` +
      `it is the generation budget and follows training.max_tokens; leave it out (or set it equal)`,
    Code.InvalidArgument,
  );
}

/**
 * training.temperature is the one source of the sampling temperature (it reaches the learner
 * as TrainStepHeader.sampling); an algorithm.config.temperature that says otherwise is refused
 * here rather than by the learner at the first step.
 */
function checkOneTemperature(config: RunConfig): void {
  const knob = config.algorithm.config.temperature;
  if (knob === undefined) return;
  // Greedy decoding (0) is scored under temperature 1 (common.proto SamplingDistribution).
  const sampled = config.training.temperature === 0 ? 1 : config.training.temperature;
  if (typeof knob !== "number" || Math.abs(knob - sampled) > 1e-6 * Math.max(1, sampled)) {
    throw new ConnectError(
      `algorithm.config.temperature is ${JSON.stringify(knob)} but training.temperature is ${config.training.temperature}: ` +
        "the learner scores under the distribution the sampler drew from; set training.temperature and leave algorithm.config.temperature out",
      Code.InvalidArgument,
    );
  }
}

const DYNAMIC_SAMPLING_KNOB = "dynamic_sampling";

/**
 * Whether the run drops groups whose rewards all agree and refills the batch. "auto" follows
 * the algorithm's own `dynamic_sampling` knob (dapo: on unless algorithm.config turns it off);
 * an algorithm without that knob keeps every group.
 */
export function usesDynamicSampling(config: RunConfig, algorithm: AlgorithmInfo): boolean {
  const setting = config.training.dynamic_sampling;
  if (setting !== "auto") return setting;
  const knob = algorithm.params.find((p) => p.name === DYNAMIC_SAMPLING_KNOB);
  if (!knob) return false;
  const chosen = config.algorithm.config[DYNAMIC_SAMPLING_KNOB];
  return chosen === undefined ? knob.defaultValue === "true" : chosen === true;
}
