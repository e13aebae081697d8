// Scores completions the way the service does, in-process, with verifications
// passed in: evidence, then the composite reward.
import type { Completion, Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import type { VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { gatherEvidence } from "../src/reward/evidence.js";
import { composeReward } from "../src/reward/reward-composer.js";
import { applyOverrides, presetReward, type ResolvedReward } from "../src/reward/reward-spec.js";
import { mathAnswerScorer, mathJudgeOptions } from "../src/scorers/math-answer.js";

export function preset(name: string): ResolvedReward {
  return presetReward(name, "preset");
}

/** A reward of the given scorers only: [name, weight, params]. */
export function rewardOf(...scorers: [string, number, Record<string, unknown>?][]): ResolvedReward {
  return applyOverrides(
    { name: "test", description: "test reward", scorers: [] },
    scorers.map(([name, weight, params], i) => ({
      name,
      weight,
      params: params ?? {},
      field: `scorers[${i}]`,
      paramsField: `scorers[${i}].params`,
    })),
  );
}

export async function scoreGroup(
  reward: ResolvedReward,
  theorem: Theorem,
  completions: Completion[],
  verifications: (VerifyResponse | undefined)[] = [],
): Promise<RewardResult[]> {
  const evidence = await gatherEvidence(
    theorem,
    completions.map((completion, i) => ({
      completion,
      field: `completions[${i}]`,
      verificationField: `verifications[${i}]`,
      ...(verifications[i] ? { verification: verifications[i] } : {}),
    })),
    {
      verifier: undefined,
      signal: new AbortController().signal,
      deadline: Date.now() + 10_000,
      leanTimeoutMs: 0,
      maxParallelVerifications: 4,
      math: mathJudgeOptions(reward.scorers.find((s) => s.scorer === mathAnswerScorer)?.params),
      requestId: "test",
    },
  );
  const group = { size: evidence.length, solved: evidence.filter((e) => e.solved).length };
  return evidence.map((e) => composeReward(reward, e, group));
}

export async function scoreOne(
  reward: ResolvedReward,
  theorem: Theorem,
  completion: Completion,
  verification?: VerifyResponse,
): Promise<RewardResult> {
  const [result] = await scoreGroup(reward, theorem, [completion], [verification]);
  return result!;
}

export function component(result: RewardResult, scorer: string) {
  const found = result.components.find((c) => c.scorer === scorer);
  if (!found) throw new Error(`no ${scorer} component in ${result.components.map((c) => c.scorer).join(", ")}`);
  return found;
}
