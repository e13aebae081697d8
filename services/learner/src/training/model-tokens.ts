// The loss mask of a multi-turn trajectory (TrainingSample.completion_mask): which completion
// tokens the model wrote (trained on) and which the environment inserted (Lean's errors, the
// checker's feedback: they condition what follows, so they stay in the forward pass, but no
// logprob ratio, KL, clip count, entropy or length normaliser counts them). verl calls it
// response_mask, TRL masks tool-call results the same way. No mask: every token is the model's.
import * as tf from "@tensorflow/tfjs-core";
import { rightAligned } from "./aligned-tensors.js";
import type { TrainingExample } from "./training-example.js";

type Masked = Pick<TrainingExample, "completionIds" | "completionMask">;

function hasMask(example: Masked): example is Masked & { completionMask: readonly boolean[] } {
  return example.completionMask != null && example.completionMask.length > 0;
}

/** How many completion tokens are the model's: the length every normaliser and length metric uses. */
export function modelTokenCount(example: Masked): number {
  return hasMask(example) ? example.completionMask.filter(Boolean).length : example.completionIds.length;
}

/** The entries of a per-completion-token array (old, sampler logprobs) at the model's tokens. */
export function atModelTokens<T>(example: Masked, values: readonly T[]): T[] {
  return hasMask(example) ? values.filter((_, t) => example.completionMask[t]) : [...values];
}

/**
 * completionLogprobs' [b, C] mask (1 on completion tokens) narrowed to the model's tokens, in the
 * same right-aligned layout; the mask itself when no row carries a loss mask.
 */
export function lossMask(completionMask: tf.Tensor2D, rows: readonly { example: Masked }[]): tf.Tensor2D {
  if (!rows.some((r) => hasMask(r.example))) return completionMask;
  const model = rightAligned(
    rows.map(({ example }) => (hasMask(example) ? example.completionMask.map(Number) : example.completionIds.map(() => 1))),
    completionMask.shape[1],
  );
  return tf.mul(completionMask, model) as tf.Tensor2D;
}
