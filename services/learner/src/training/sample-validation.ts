// Checks a whole batch before anything is computed, so a rejected TrainStep changes nothing.
// Each message names the field by its path in the request (`samples[3].reward`: the fourth
// sample message of the TrainStep stream; `sequences[0].completion_token_ids[1]` in
// ComputeLogprobs), the sample's id, and what is accepted; the PyTorch learner words them
// the same (tests/conformance/learner/bad-input.spec.ts holds both to it).
import type { ModelConfig, PromptCompletion } from "@lean-grpo/lm";
import { SampleError } from "./sample-error.js";
import type { TrainingExample } from "./training-example.js";

export interface BatchExpectations {
  /** Samples the header announced (0: no check). */
  expectedSamples: number;
  /** Completions per group (0: no check). */
  numGenerations: number;
}

/** `path` is the ids' field path; `suffix` says whose they are (a sample's id). */
function checkIds(path: string, ids: readonly number[], config: ModelConfig, suffix = ""): void {
  if (ids.length === 0) throw new SampleError(`${path} is empty${suffix}; at least one token is needed`);
  ids.forEach((id, i) => {
    if (id >= config.vocabSize) {
      throw new SampleError(`${path}[${i}] = ${id} is outside the model's vocabulary [0, ${config.vocabSize})${suffix}`);
    }
  });
}

function checkContext(path: string, tokens: number, config: ModelConfig, suffix = ""): void {
  if (tokens > config.maxPositionEmbeddings) {
    throw new SampleError(
      `${path}: prompt + completion is ${tokens} tokens${suffix}; the model's context (max_position_embeddings) is ${config.maxPositionEmbeddings}`,
    );
  }
}

/** The loss mask: none (every token the model's), or one flag per completion token with at least one true. */
function checkCompletionMask(where: string, of: string, example: TrainingExample): void {
  const mask = example.completionMask;
  if (!mask || mask.length === 0) return;
  const tokens = example.completionIds.length;
  if (mask.length !== tokens) {
    throw new SampleError(
      `${where}.completion_mask has ${mask.length} values but ${where}.completion_token_ids has ${tokens}${of}; ` +
        "send one per completion token (true: the model's, trained on; false: the environment's, conditioning only), or none (every token the model's)",
    );
  }
  if (!mask.includes(true)) {
    throw new SampleError(
      `${where}.completion_mask has no true value among its ${tokens}${of}; ` +
        "at least one completion token must be the model's (true), or send no mask (every token the model's)",
    );
  }
}

/** ComputeLogprobs' sequences: every id a token of the model, every sequence within its context. */
export function validateSequences(sequences: readonly PromptCompletion[], config: ModelConfig): void {
  sequences.forEach((sequence, row) => {
    checkIds(`sequences[${row}].prompt_token_ids`, sequence.promptIds, config);
    checkIds(`sequences[${row}].completion_token_ids`, sequence.completionIds, config);
    checkContext(`sequences[${row}]`, sequence.promptIds.length + sequence.completionIds.length, config);
  });
}

export function validateExamples(examples: readonly TrainingExample[], config: ModelConfig, expected: BatchExpectations): void {
  if (examples.length === 0) throw new SampleError("the batch has no samples; send the header, then at least one sample");
  if (expected.expectedSamples !== 0 && examples.length !== expected.expectedSamples) {
    throw new SampleError(`header.expected_samples is ${expected.expectedSamples} but the stream delivered ${examples.length} samples`);
  }
  const groupSizes = new Map<string, number>();
  examples.forEach((example, index) => {
    const where = `samples[${index}]`;
    const of = ` (sample_id ${JSON.stringify(example.sampleId)})`;
    if (example.groupId === "") throw new SampleError(`${where}.group_id is empty${of}; every sample needs the group of its prompt`);
    checkIds(`${where}.prompt_token_ids`, example.promptIds, config, of);
    checkIds(`${where}.completion_token_ids`, example.completionIds, config, of);
    checkContext(where, example.promptIds.length + example.completionIds.length, config, of);
    const sampler = example.samplerLogprobs;
    if (sampler) {
      if (sampler.length !== example.completionIds.length) {
        throw new SampleError(
          `${where}.sampler_logprobs has ${sampler.length} values but ${where}.completion_token_ids has ${example.completionIds.length}${of}; send one per completion token, or none`,
        );
      }
      sampler.forEach((lp, i) => {
        if (!Number.isFinite(lp) || lp > 0)
          throw new SampleError(`${where}.sampler_logprobs[${i}] = ${lp}${of}; a logprob must be finite and <= 0`);
      });
    }
    checkCompletionMask(where, of, example);
    if (!Number.isFinite(example.reward)) throw new SampleError(`${where}.reward is ${example.reward}${of}; it must be a finite number`);
    groupSizes.set(example.groupId, (groupSizes.get(example.groupId) ?? 0) + 1);
  });
  if (expected.numGenerations !== 0) {
    for (const [group, size] of groupSizes) {
      if (size !== expected.numGenerations) {
        throw new SampleError(
          `header.num_generations is ${expected.numGenerations} but group_id ${JSON.stringify(group)} has ${size} samples; send num_generations samples per group (or 0 to skip the check)`,
        );
      }
    }
  }
}
