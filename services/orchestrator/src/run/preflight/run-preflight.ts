// Every check StartRun makes before it accepts a run, in one place and in the order a user
// would fix them: what the mode needs from the dataset and the mesh, the algorithm the learner
// must have, the sampling distribution both the sampler and the learner must honour, the reward
// spec the reward service must accept for the run's generation budget, and every prompt of the
// training and held-out sets the tokenizer must encode. A refusal names the config key and what
// is accepted; nothing is written to the run's directory before all of them pass.
// One test each: apps/lean-grpo/test/run-preflight.spec.ts.
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { OrchestratorConfig } from "../../config.js";
import { describeAlgorithm, usesDynamicSampling } from "../config/learner-algorithm.js";
import type { MeshClients } from "../mesh-clients.js";
import { checkPromptsEncode } from "./prompt-check.js";
import { usesChatPrompts } from "../rollout/prompts.js";
import { checkRewardSpec } from "./reward-check.js";
import type { RunConfig } from "../config/run-config.js";
import { checkRunMode } from "./run-mode-check.js";
import { checkSamplingHonoured } from "./sampling-preflight.js";
import { checkReasoningVocabulary } from "./reasoning-check.js";
import type { ReasoningVocabulary } from "@lean-grpo/gen/leangrpo/v1/common_pb";

export interface PreflightInputs {
  config: RunConfig;
  /** The training set's label in messages (its path, or "inline"). */
  dataset: string;
  theorems: readonly Theorem[];
  heldout: readonly Theorem[];
  services: OrchestratorConfig["services"];
}

/** What the checks learned that the run needs. */
export interface PreflightFindings {
  /** The algorithm's name as the learner spells it (the config may name it in another case). */
  algorithmName: string;
  /** Whether the algorithm refills groups with no reward spread (DAPO's dynamic sampling). */
  dynamicSampling: boolean;
  /** The mesh's reasoning vocabulary; absent when its model has none. */
  reasoning?: ReasoningVocabulary;
}

/** Every check, in order; throws the first refusal (a ConnectError naming the key). */
export async function runPreflight(clients: MeshClients, inputs: PreflightInputs): Promise<PreflightFindings> {
  const { config } = inputs;
  checkRunMode(config, inputs.theorems, inputs.services);
  const algorithm = await describeAlgorithm(clients, config);
  const dynamicSampling = usesDynamicSampling(config, algorithm);
  await checkSamplingHonoured(clients, config);
  const reasoning = await checkReasoningVocabulary(clients, config);
  await checkRewardSpec(clients, config);
  // Checked now, not at the step (or after the held-out evaluation) that would meet them.
  const chat = await usesChatPrompts(config.prompt.format, clients);
  await checkPromptsEncode(
    clients,
    [
      { label: `dataset ${inputs.dataset}`, theorems: inputs.theorems },
      { label: `held-out set ${config.eval.data}`, theorems: inputs.heldout },
    ],
    config.prompt,
    chat,
  );
  return { algorithmName: algorithm.name, dynamicSampling, ...(reasoning ? { reasoning } : {}) };
}
