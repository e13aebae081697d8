// One ScoreGroup call as every rollout makes it (whole-proof, tactic, each repair turn): the run's reward spec,
// retried while the reward service is lost, inside a rollout.score span; with the seconds it
// took and the longest verification inside it (the verifier's share of the scoring time).
import type { Attributes } from "@opentelemetry/api";
import type { Completion, Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { ScoreGroupResponse } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { rewardSpec } from "../config/reward-spec.js";
import { inSpan } from "../outputs/tracing.js";
import type { RunConfig } from "../config/run-config.js";
import type { MeshClients } from "../mesh-clients.js";

export interface ScoredGroup {
  scored: ScoreGroupResponse;
  /** Wall seconds of the ScoreGroup call. */
  seconds: number;
  /** Seconds of it the longest verification took (never more than the call). */
  verifyS: number;
}

export async function scoreGroup(
  ctx: { clients: Pick<MeshClients, "reward" | "withRetry">; config: RunConfig; signal?: AbortSignal | undefined },
  group: { theorem: Theorem; completions: Completion[]; groupId: string },
  attributes: Attributes,
): Promise<ScoredGroup> {
  const started = performance.now();
  const scored = await inSpan("rollout.score", attributes, () =>
    ctx.clients.withRetry(
      "reward",
      () => ctx.clients.reward.scoreGroup({ ...group, ...rewardSpec(ctx.config) }, { signal: ctx.signal }),
      ctx.signal,
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const verifyS = Math.min(seconds, Math.max(0, ...scored.results.map((r) => (r.verification?.timings?.totalMs ?? 0) / 1000)));
  return { scored, seconds, verifyS };
}
