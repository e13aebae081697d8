// Before a run starts: can the inference service sample from the run's distribution and
// report its logprobs, and can the learner score under it? One Generate of one token with
// the run's sampling settings, then one ComputeLogprobs of that token under the same
// SamplingDistribution. A backend that would report the wrong logprobs (vLLM started
// without --logprobs-mode processed_logprobs, for T ≠ 1 or top-k/top-p) or a learner that
// cannot apply top-k/top-p refuses here, and the run is refused naming the keys, instead
// of training on a distribution other than the one sampled.
import { Code, ConnectError } from "@connectrpc/connect";
import { reasoningMaskOf } from "../config/reasoning-mask.js";
import type { MeshClients } from "../mesh-clients.js";
import type { RunConfig } from "../config/run-config.js";
import { learnerLogprobsOf } from "../training/learner-scoring.js";

const PROBE_PROMPT = "1+1=";

function refused(who: string, config: RunConfig, error: unknown): ConnectError {
  const { temperature, top_k: topK, top_p: topP } = config.training;
  const cause = ConnectError.from(error);
  return new ConnectError(
    `training.temperature=${temperature}, training.top_k=${topK}, training.top_p=${topP}, model.reasoning_mask=${config.model.reasoning_mask}: the ${who} cannot honour this sampling distribution: ${cause.rawMessage}`,
    cause.code === Code.Unavailable ? Code.Unavailable : Code.FailedPrecondition,
  );
}

export async function checkSamplingHonoured(clients: MeshClients, config: RunConfig, signal?: AbortSignal): Promise<void> {
  const { temperature, top_k: topK, top_p: topP } = config.training;
  let generated: Awaited<ReturnType<MeshClients["inference"]["generate"]>>;
  try {
    generated = await clients.withRetry(
      "inference",
      () =>
        clients.inference.generate(
          {
            prompt: { kind: { case: "text", value: PROBE_PROMPT } },
            n: 1,
            sampling: { maxTokens: 1, temperature, topK, topP, seed: 0n, reasoningMask: reasoningMaskOf(config) },
            requestId: "sampling-preflight",
          },
          { signal },
        ),
      signal,
    );
  } catch (error) {
    throw refused("inference service", config, error);
  }
  const completion = generated.completions[0];
  if (!completion || completion.tokenIds.length === 0 || generated.promptTokenIds.length === 0) return;
  if (completion.logprobs.length !== completion.tokenIds.length) {
    throw new ConnectError(
      "the inference service returned no sampler logprobs; the learner's importance weights and sampling_logp_difference_mean need them",
      Code.FailedPrecondition,
    );
  }
  try {
    await learnerLogprobsOf(clients, config, generated.promptTokenIds, completion.tokenIds, signal);
  } catch (error) {
    throw refused("learner", config, error);
  }
}
