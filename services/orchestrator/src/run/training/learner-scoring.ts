// One sampled completion scored by the learner under the run's sampling distribution
// (ComputeLogprobs, retried as every learner call): what the start-up preflight and the
// adapter check after each sync both ask.
import type { ComputeLogprobsResponse } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import type { MeshClients } from "../mesh-clients.js";
import type { RunConfig } from "../config/run-config.js";
import { stepSampling } from "./training-stream.js";

export function learnerLogprobsOf(
  clients: MeshClients,
  config: RunConfig,
  promptTokenIds: readonly number[],
  completionTokenIds: readonly number[],
  signal?: AbortSignal,
): Promise<ComputeLogprobsResponse> {
  return clients.withRetry(
    "learner",
    () =>
      clients.learner.computeLogprobs(
        {
          sequences: [{ promptTokenIds: [...promptTokenIds], completionTokenIds: [...completionTokenIds] }],
          sampling: stepSampling(config),
        },
        { signal },
      ),
    signal,
  );
}
