// One group in repair mode (training.mode "repair"): num_generations repair trajectories of
// one problem (repair-trajectories.ts), and what the learner trains on. A trajectory is ONE
// TrainingSample: the completion is attempt 1 + feedback + attempt 2 + …, exactly the ids the
// sampler saw and produced, with completion_mask false on the feedback tokens (conditioning
// only: the learner never trains on the checker's words) and placeholder sampler logprobs
// (0) there. Its reward is the last attempt's, times rollout.turn_discount per extra attempt
// when solved, so the group's advantage compares whole trajectories.
import { create } from "@bufbuild/protobuf";
import { reasoningMaskOf } from "../config/reasoning-mask.js";
import { CompletionSchema, type Completion, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { countReplayRefusals } from "../outputs/replay-refusals.js";
import { countTheoremErrors } from "../outputs/theorem-errors.js";
import { buildPrompt, leanProofFormat, promptText } from "./prompts.js";
import { rollRepairTrajectories, type RepairTrajectory } from "./repair-trajectories.js";
import type { RolloutContext, RolloutGroup, RolloutSample } from "./rollout.js";
import type { RunConfig } from "../config/run-config.js";
import type { ReadableTurn } from "../training/step-samples.js";
import { inSpan, recordedSpan, runAttributes } from "../outputs/tracing.js";

/** Placeholder sampler logprob of an environment token: masked out, never read by the learner. */
export const ENVIRONMENT_LOGPROB = 0;

/** The trajectory's reward: its last attempt's, discounted per extra attempt when solved. */
export function trajectoryReward(trajectory: RepairTrajectory, discount: number): number {
  const last = trajectory.attempts.at(-1)!.result;
  return last.solved ? last.reward * discount ** (trajectory.attempts.length - 1) : last.reward;
}

/** The trajectory as one training sample's completion and mask: model tokens true, feedback tokens false. */
export function trajectoryCompletion(trajectory: RepairTrajectory): { completion: Completion; mask: boolean[] } {
  const ids: number[] = [];
  const logprobs: number[] = [];
  const mask: boolean[] = [];
  for (const attempt of trajectory.attempts) {
    ids.push(...attempt.completion.tokenIds);
    logprobs.push(...attempt.completion.logprobs);
    mask.push(...attempt.completion.tokenIds.map(() => true));
    if (attempt.feedback) {
      ids.push(...attempt.feedback.ids);
      logprobs.push(...attempt.feedback.ids.map(() => ENVIRONMENT_LOGPROB));
      mask.push(...attempt.feedback.ids.map(() => false));
    }
  }
  const first = trajectory.attempts[0]!.completion;
  const last = trajectory.attempts.at(-1)!.completion;
  const completion = create(CompletionSchema, {
    index: trajectory.index,
    text: last.text,
    tokenIds: ids,
    logprobs,
    // Truncated / stopped as its last attempt was (the overlong filter looks at the attempt the trajectory ended on).
    finishReason: last.finishReason,
    stopReason: last.stopReason,
    adapter: first.adapter,
    policyVersion: first.policyVersion,
  });
  return { completion, mask };
}

/** The turns to read: each attempt, its verdict and the feedback that followed it. */
export function readableTurns(trajectory: RepairTrajectory): ReadableTurn[] {
  return trajectory.attempts.map((a) => ({
    completion: a.completion,
    result: a.result,
    ...(a.feedback ? { feedback: a.feedback.message, feedbackText: a.feedback.text } : {}),
  }));
}

export function repairSampling(config: RunConfig) {
  const t = config.training;
  return { maxTokens: t.max_tokens, temperature: t.temperature, topP: t.top_p, topK: t.top_k, reasoningMask: reasoningMaskOf(config) };
}

export function repairRolloutGroup(ctx: RolloutContext, theorem: Theorem, groupId: string, seed: number): Promise<RolloutGroup> {
  const attributes = runAttributes(ctx.runId, ctx.step, theorem.id);
  return inSpan("rollout.group", { ...attributes, "leangrpo.group_id": groupId, "leangrpo.mode": "repair" }, async (span) => {
    const startedAt = Date.now();
    const { config } = ctx;
    const rollout = await rollRepairTrajectories({
      clients: ctx.clients,
      config,
      theorem,
      chatPrompts: ctx.chatPrompts,
      adapter: ctx.adapter,
      n: config.training.num_generations,
      maxTurns: config.rollout.max_turns,
      sampling: repairSampling(config),
      seed,
      requestId: `${ctx.runId}/${groupId}`,
      groupId,
      attributes,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const { trajectories } = rollout;
    const rewards = trajectories.map((t) => trajectoryReward(t, config.rollout.turn_discount));
    const solved = trajectories.map((t) => t.solved);
    const samples: RolloutSample[] = [];
    const finals: RewardResult[] = [];
    trajectories.forEach((t, i) => {
      const { completion, mask } = trajectoryCompletion(t);
      samples.push({
        sampleId: `${groupId}/${t.index}`,
        promptTokenIds: rollout.promptTokenIds,
        completion,
        reward: rewards[i]!,
        completionMask: mask,
      });
      finals.push({ ...t.attempts.at(-1)!.result, reward: rewards[i]! });
      recordedSpan(
        "rollout.completion",
        {
          ...attributes,
          "leangrpo.completion_index": i,
          "leangrpo.reward": rewards[i]!,
          "leangrpo.solved": t.solved,
          "leangrpo.turns": t.attempts.length,
          "leangrpo.completion_tokens": completion.tokenIds.length,
        },
        startedAt,
        Date.now(),
      );
    });
    const mean = rewards.reduce((a, r) => a + r, 0) / Math.max(1, rewards.length);
    const rewardStd = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / Math.max(1, rewards.length));
    span.setAttributes({ "leangrpo.reward_mean": mean, "leangrpo.pass_rate": solved.filter(Boolean).length / Math.max(1, solved.length) });
    const allResults = trajectories.flatMap((t) => t.attempts.map((a) => a.result));
    return {
      groupId,
      theorem,
      samples,
      rewards,
      solved,
      rewardStd,
      replayRefusals: countReplayRefusals(allResults),
      theoremErrors: countTheoremErrors(allResults),
      repair: {
        turns: trajectories.map((t) => t.attempts.length),
        solvedFirst: trajectories.map((t) => t.attempts[0]!.result.solved),
      },
      readable: {
        groupId,
        theoremId: theorem.id,
        prompt: promptText(theorem, config.prompt),
        ...leanProofFormat(theorem),
        sampled: buildPrompt(theorem, config.prompt, ctx.chatPrompts),
        completions: trajectories.map((t) => t.attempts.at(-1)!.completion),
        results: finals,
        turns: trajectories.map(readableTurns),
      },
      generateS: rollout.generateS,
      verifyS: Math.min(rollout.scoreS, rollout.verifyS),
      scoreS: Math.max(0, rollout.scoreS - rollout.verifyS),
    };
  });
}
