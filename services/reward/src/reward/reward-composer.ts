// The composite reward of one completion: every applicable scorer's value,
// weighted and summed, each component reported. An empty completion gets every
// scorer's minimum, so it can never be a safe choice for the policy.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { RewardComponentSchema, RewardResultSchema, type RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import type { ResolvedReward } from "./reward-spec.js";
import { TASK_NAMES, type Evidence, type GroupEvidence } from "./scorer.js";

export function composeReward(reward: ResolvedReward, evidence: Evidence, group: GroupEvidence | undefined): RewardResult {
  const applicable = reward.scorers.filter((s) => s.scorer.tasks.includes(evidence.task));
  if (applicable.length === 0) {
    throw new ConnectError(
      `spec: no scorer of reward "${reward.name}" (${reward.scorers.map((s) => s.scorer.name).join(", ")}) applies to a ` +
        `${TASK_NAMES[evidence.task]} task; add one that does (lean_proof or math_answer)`,
      Code.InvalidArgument,
    );
  }
  const components = applicable.map(({ scorer, weight, params }) => {
    const { value, detail } = evidence.empty
      ? { value: scorer.bounds(params).unsolved[0], detail: "empty completion: the minimum" }
      : scorer.score(evidence, params, group);
    return create(RewardComponentSchema, { scorer: scorer.name, value, weight, weighted: value * weight, detail });
  });
  return create(RewardResultSchema, {
    reward: components.reduce((sum, c) => sum + c.weighted, 0),
    components,
    solved: evidence.solved,
    ...(evidence.task === TaskKind.LEAN_PROOF && evidence.verification ? { verification: evidence.verification } : {}),
  });
}
