// Picks the next token from one row of logits: greedy at temperature 0, otherwise a draw
// from softmax(logits / T) restricted to the top-k tokens and then to the smallest set
// whose probability reaches top-p (vLLM's order; the cut is shared with the learner:
// logprobs/sampling-distribution.ts). The reported logprob is the token's log-probability
// under that processed distribution (kept set, renormalised), the one it was drawn from
// and the one the learner computes for the same token (vLLM: processed_logprobs), so
// importance ratios compare like with like. Greedy (T = 0) reports the full distribution
// at T = 1. With a reasoning vocabulary the reasoning mask comes first (the row's block
// state decides which ids may be drawn at all), and a copy of a stop token stops.
import { ModelInputError } from "../errors.js";
import { keptTokens, truncates } from "../logprobs/sampling-distribution.js";
import { maskLogitsRow, restricts, type BlockState } from "../reasoning-vocab/reasoning-mask.js";
import type { ReasoningMaskMode } from "../reasoning-vocab/reasoning-settings.js";
import type { ReasoningVocabulary } from "../reasoning-vocab/reasoning-vocabulary.js";

export interface SamplingParams {
  /** 0 picks the most likely token. */
  temperature: number;
  /** Keep only the k most likely tokens; 0 keeps all. */
  topK: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p; 1 keeps all. */
  topP: number;
  /** The model's reasoning vocabulary and the mask mode to sample under. */
  reasoning?: { vocab: ReasoningVocabulary; mode: ReasoningMaskMode };
}

/** Whether a sampled token ends its sequence: a stop id, or (reasoning vocabulary) a copy of one. */
export function isStop(stop: ReadonlySet<number>, token: number, params: SamplingParams): boolean {
  return stop.has(token) || (params.reasoning !== undefined && stop.has(params.reasoning.vocab.source(token)));
}

export interface SampledToken {
  token: number;
  logprob: number;
}

export function validateSamplingParams(params: SamplingParams): void {
  if (!(params.temperature >= 0) || !Number.isFinite(params.temperature)) {
    throw new ModelInputError(`temperature ${params.temperature} must be a number >= 0 (0 is greedy)`);
  }
  if (!Number.isInteger(params.topK) || params.topK < 0) {
    throw new ModelInputError(`top_k ${params.topK} must be an integer >= 0 (0 keeps every token)`);
  }
  if (!(params.topP > 0 && params.topP <= 1)) {
    throw new ModelInputError(`top_p ${params.topP} must be in (0, 1] (1 keeps every token)`);
  }
}

/** Index of the largest value; the lowest index wins a tie. */
function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** `block`: the row's block state (reasoning vocabulary only); the mask applies to a copy of the row. */
export function sampleToken(logits: Float32Array, params: SamplingParams, random: () => number, block?: BlockState): SampledToken {
  if (params.reasoning && block !== undefined && restricts(block, params.reasoning.mode)) {
    logits = Float32Array.from(logits);
    maskLogitsRow(logits, block, params.reasoning.mode, params.reasoning.vocab);
  }
  const temperature = params.temperature === 0 ? 1 : params.temperature;
  const z = new Float64Array(logits.length);
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    z[i] = logits[i]! / temperature;
    max = Math.max(max, z[i]!);
  }
  const weights = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) weights[i] = Math.exp(z[i]! - max);
  if (params.temperature === 0) {
    // Greedy: the logprob under the full distribution at T = 1 (nothing was sampled).
    const token = argmax(logits);
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i]!;
    return { token, logprob: z[token]! - max - Math.log(total) };
  }

  const distribution = { temperature, topK: params.topK, topP: params.topP };
  const candidates = truncates(distribution, logits.length) ? keptTokens(z, weights, distribution) : null; // null: all, in id order
  const count = candidates ? candidates.length : logits.length;
  const idAt = candidates ? (k: number) => candidates[k]! : (k: number) => k;
  let mass = 0;
  for (let k = 0; k < count; k++) mass += weights[idAt(k)]!;
  // The logprob under the processed (kept and renormalised) distribution: what was drawn from.
  const logprobOf = (token: number) => z[token]! - max - Math.log(mass);
  let target = random() * mass;
  for (let k = 0; k < count; k++) {
    target -= weights[idAt(k)]!;
    if (target < 0) return { token: idAt(k), logprob: logprobOf(idAt(k)) };
  }
  // Rounding can leave a sliver past the end: it belongs to the last kept token.
  const last = idAt(count - 1);
  return { token: last, logprob: logprobOf(last) };
}
