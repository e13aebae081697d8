// Before a run starts: do the inference service and the learner hold the same reasoning
// vocabulary (docs/concepts/reasoning-vocabulary.md)? Their maps' hashes must agree (a row
// trained as one token and sampled as another would silently train the wrong rows), and a
// gated or strict run needs one. Runs after the sampling check, which has loaded the learner.
// What they hold is the run's metadata (n_s, n_r, map hash, markers; run.json "reasoning").
import { Code, ConnectError } from "@connectrpc/connect";
import type { ReasoningVocabulary } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { MeshClients } from "../mesh-clients.js";
import type { RunConfig } from "../config/run-config.js";

const describe = (v: ReasoningVocabulary | undefined) =>
  v ? `n_s ${v.standardSize}, n_r ${v.reasoningSize}, map sha256 ${v.mapSha256.slice(0, 12)}…` : "none";

export async function checkReasoningVocabulary(
  clients: MeshClients,
  config: RunConfig,
  signal?: AbortSignal,
): Promise<ReasoningVocabulary | undefined> {
  const [models, status] = await Promise.all([
    clients.withRetry("inference", () => clients.inference.listModels({}, { signal }), signal),
    clients.withRetry("learner", () => clients.learner.getStatus({}, { signal }), signal),
  ]);
  const served = models.baseModel?.reasoningVocabulary;
  const trained = status.reasoningVocabulary;
  // vLLM's model is described by its own directory, not by the service's: only the learner's is known.
  const comparable = models.backend !== "vllm";
  if (comparable && (served?.mapSha256 ?? "") !== (trained?.mapSha256 ?? "")) {
    throw new ConnectError(
      `the inference service's model has reasoning vocabulary ${describe(served)} but the learner's has ${describe(trained)}: ` +
        "give both the same model.reasoning_vocab_size / model.reasoning_map (and markers)",
      Code.FailedPrecondition,
    );
  }
  const vocabulary = trained ?? served;
  if (config.model.reasoning_mask !== "free" && !vocabulary) {
    throw new ConnectError(
      `model.reasoning_mask is ${config.model.reasoning_mask} but the mesh's model has no reasoning vocabulary: set model.reasoning_vocab_size > 0, or use model.reasoning_mask: free`,
      Code.FailedPrecondition,
    );
  }
  return vocabulary;
}
