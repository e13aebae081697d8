// The TrainStep request stream of one step: a header (algorithm, its knobs, the batch
// shape), then one TrainingSample per RolloutSample of the groups kept.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { reasoningMaskOf } from "../config/reasoning-mask.js";
import { FinishReason } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { TrainingMode, type TrainStepRequestSchema } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { ASYNC_IMPORTANCE_SAMPLING_CAP, ASYNC_IMPORTANCE_SAMPLING_MODE, type RunConfig } from "../config/run-config.js";
import type { RolloutGroup } from "../rollout/rollout.js";
import { GENERATION_BUDGET_KNOB } from "../config/learner-algorithm.js";

/** algorithm.config as sent: the run's knobs, the generation budget, and an async run's correction. */
export function stepAlgorithmConfig(config: RunConfig): Record<string, unknown> {
  return withAsyncCorrection(config.training.async, withGenerationBudget(config));
}

/**
 * An async run trains on samples one policy version old, so unless the config chose
 * (importance_sampling_cap or its alias truncated_is, null included), it asks the learner
 * for truncated importance sampling against the sampler logprobs every sample carries, per
 * token and truncated (ASYNC_IMPORTANCE_SAMPLING_MODE). Exported for checks made before a
 * run starts, so that they judge the knobs the learner will get.
 */
export function withAsyncCorrection(async: boolean, knobs: Record<string, unknown>): Record<string, unknown> {
  if (!async || "importance_sampling_cap" in knobs || "truncated_is" in knobs) return knobs;
  // Token-level truncation (ART's truncated_is): the one-step lag the async preset was measured with.
  return { ...ASYNC_IMPORTANCE_SAMPLING_MODE, ...knobs, importance_sampling_cap: ASYNC_IMPORTANCE_SAMPLING_CAP };
}

/**
 * Dr. GRPO's constant normaliser, max_completion_length, is the generation budget: every
 * algorithm of the contract's learners lists the knob (the conformance suite checks it), and
 * the run sends training.max_tokens as it. A different value is refused at StartRun
 * (learner-algorithm.ts), so it cannot drift from the budget.
 */
function withGenerationBudget(config: RunConfig): Record<string, unknown> {
  return { ...config.algorithm.config, [GENERATION_BUDGET_KNOB]: config.training.max_tokens };
}

/**
 * TrainStepHeader.sampling from the run's sampling settings, exactly as rollouts sent them to
 * the inference service (training.temperature, top_k, top_p). Temperature 0 means greedy
 * decoding to both: the learner scores it as samplers report greedy logprobs (common.proto).
 */
/** The run's reasoning mask as the contract's enum (model.reasoning_mask). */
export function stepSampling(config: RunConfig): { temperature: number; topK: number; topP: number; reasoningMask: ReasoningMask } {
  const { temperature, top_k: topK, top_p: topP } = config.training;
  return { temperature, topK, topP, reasoningMask: reasoningMaskOf(config) };
}

export function sampleCount(groups: readonly RolloutGroup[]): number {
  return groups.reduce((n, g) => n + g.samples.length, 0);
}

export async function* trainingStream(
  runId: string,
  config: RunConfig,
  groups: readonly RolloutGroup[],
): AsyncGenerator<MessageInitShape<typeof TrainStepRequestSchema>> {
  yield {
    part: {
      case: "header",
      value: {
        algorithm: config.algorithm.name,
        algorithmConfig: stepAlgorithmConfig(config) as Record<string, never>,
        mode: TrainingMode.RL,
        runId,
        // 0 skips the learner's step-order check: a DAPO step may train nothing, so run
        // steps and learner steps can differ; resume restores both from the checkpoint.
        step: 0n,
        expectedSamples: sampleCount(groups),
        // Tactic mode sends one sample per turn, so a group's size varies with its
        // trajectories' lengths: 0 skips the learner's group-size check.
        numGenerations: config.training.mode === "tactic" ? 0 : config.training.num_generations,
        // The distribution the rollouts were drawn from: the learner scores every logprob under it.
        sampling: stepSampling(config),
      },
    },
  };
  for (const group of groups) {
    for (const { sampleId, promptTokenIds, completion, reward, completionMask } of group.samples) {
      yield {
        part: {
          case: "sample",
          value: {
            groupId: group.groupId,
            promptTokenIds,
            completionTokenIds: completion.tokenIds,
            samplerLogprobs: completion.logprobs,
            reward,
            truncated: completion.finishReason === FinishReason.LENGTH,
            policyVersion: completion.policyVersion,
            sampleId,
            // Repair mode: the feedback tokens between attempts are conditioning only.
            ...(completionMask ? { completionMask } : {}),
          },
        },
      };
    }
  }
}
