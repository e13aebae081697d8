// Pre-flight: the run's reward, as the reward service resolves it for this run's spec
// (preset, scorer overrides, generation budget), is checked at StartRun rather than at
// the first ScoreGroup. One Score of a one-token math answer resolves the whole spec and
// needs no verifier; a spec the service refuses (an unknown preset or scorer, a length
// that cannot fit the budget) fails the start with the service's own message.
import { Code, ConnectError } from "@connectrpc/connect";
import { FinishReason, TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { MeshClients } from "./mesh-clients.js";
import { rewardSpec, scoredCompletionBudget } from "./reward-spec.js";
import type { RunConfig } from "./run-config.js";

export async function checkRewardSpec(clients: MeshClients, config: RunConfig, signal?: AbortSignal): Promise<void> {
  try {
    await clients.withRetry(
      "reward",
      () =>
        clients.reward.score(
          {
            theorem: { id: "reward-check", kind: TaskKind.MATH_ANSWER, informalStatement: "1 + 1", answer: "2" },
            completion: { text: "\\boxed{2}", tokenIds: [0], finishReason: FinishReason.STOP },
            ...rewardSpec(config),
          },
          { signal },
        ),
      signal,
    );
  } catch (error) {
    const cause = ConnectError.from(error);
    if (cause.code !== Code.InvalidArgument) throw error;
    const budget = scoredCompletionBudget(config);
    const from =
      budget === config.training.max_tokens
        ? `training.max_tokens ${budget}`
        : `${budget} tokens: training.max_tokens ${config.training.max_tokens} × training.max_proof_steps ${config.training.max_proof_steps}`;
    throw new ConnectError(`reward (with a generation budget of ${from}): ${cause.rawMessage}`, Code.InvalidArgument);
  }
}
