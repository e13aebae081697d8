// Checks a whole batch before anything is computed, so a rejected TrainStep changes nothing.
// Each message names the sample (index and id) and the field, and what is accepted.
import type { ModelConfig } from "@lean-grpo/lm";
import { SampleError } from "./sample-error.js";
import type { TrainingExample } from "./training-example.js";

export interface BatchExpectations {
  /** Samples the header announced (0: no check). */
  expectedSamples: number;
  /** Completions per group (0: no check). */
  numGenerations: number;
}

function checkIds(where: string, field: string, ids: readonly number[], config: ModelConfig): void {
  if (ids.length === 0) throw new SampleError(`${where}: ${field} is empty; at least one token is needed`);
  ids.forEach((id, i) => {
    if (id >= config.vocabSize) {
      throw new SampleError(`${where}: ${field}[${i}] = ${id} is outside the model's vocabulary [0, ${config.vocabSize})`);
    }
  });
}

/** The loss mask: none (every token the model's), or one flag per completion token with at least one true. */
function checkCompletionMask(where: string, example: TrainingExample): void {
  const mask = example.completionMask;
  if (!mask || mask.length === 0) return;
  const tokens = example.completionIds.length;
  if (mask.length !== tokens) {
    throw new SampleError(
      `${where}: completion_mask has ${mask.length} values but completion_token_ids has ${tokens}; ` +
        "send one per completion token (true: the model's, trained on; false: the environment's, conditioning only), or none (every token the model's)",
    );
  }
  if (!mask.includes(true)) {
    throw new SampleError(
      `${where}: completion_mask has no true value among its ${tokens}; ` +
        "at least one completion token must be the model's (true), or send no mask (every token the model's)",
    );
  }
}

export function validateExamples(examples: readonly TrainingExample[], config: ModelConfig, expected: BatchExpectations): void {
  if (examples.length === 0) throw new SampleError("the batch has no samples; send the header, then at least one sample");
  if (expected.expectedSamples !== 0 && examples.length !== expected.expectedSamples) {
    throw new SampleError(`header.expected_samples is ${expected.expectedSamples} but the stream delivered ${examples.length} samples`);
  }
  const groupSizes = new Map<string, number>();
  examples.forEach((example, index) => {
    const where = `sample ${index} (sample_id ${JSON.stringify(example.sampleId)})`;
    if (example.groupId === "") throw new SampleError(`${where}: group_id is empty; every sample needs the group of its prompt`);
    checkIds(where, "prompt_token_ids", example.promptIds, config);
    checkIds(where, "completion_token_ids", example.completionIds, config);
    const total = example.promptIds.length + example.completionIds.length;
    if (total > config.maxPositionEmbeddings) {
      throw new SampleError(
        `${where}: prompt + completion is ${total} tokens; the model's context (max_position_embeddings) is ${config.maxPositionEmbeddings}`,
      );
    }
    const sampler = example.samplerLogprobs;
    if (sampler) {
      if (sampler.length !== example.completionIds.length) {
        throw new SampleError(
          `${where}: sampler_logprobs has ${sampler.length} values but completion_token_ids has ${example.completionIds.length}; send one per completion token, or none`,
        );
      }
      sampler.forEach((lp, i) => {
        if (!Number.isFinite(lp) || lp > 0)
          throw new SampleError(`${where}: sampler_logprobs[${i}] = ${lp}; a logprob must be finite and <= 0`);
      });
    }
    checkCompletionMask(where, example);
    if (!Number.isFinite(example.reward)) throw new SampleError(`${where}: reward is ${example.reward}; it must be a finite number`);
    groupSizes.set(example.groupId, (groupSizes.get(example.groupId) ?? 0) + 1);
  });
  if (expected.numGenerations !== 0) {
    for (const [group, size] of groupSizes) {
      if (size !== expected.numGenerations) {
        throw new SampleError(
          `group_id ${JSON.stringify(group)} has ${size} samples; header.num_generations is ${expected.numGenerations}`,
        );
      }
    }
  }
}
