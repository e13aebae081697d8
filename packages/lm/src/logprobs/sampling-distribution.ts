// The sampling distribution, defined once for the sampler and the learner (the contract's
// SamplingDistribution): logits / T, restricted to the top_k most likely tokens, then to the
// smallest most-likely set whose probability (within the top-k set) reaches top_p, then
// renormalised. vLLM applies the same order (temperature, top-k, top-p) and, with
// `--logprobs-mode processed_logprobs`, reports logprobs of this distribution.
//
// Which tokens are kept is decided from the logits' values alone (no gradient flows through
// the choice). Ties are broken by token id, lowest first, so the sampler and the learner cut
// at the same place. The learner adds one rule: the token actually sampled is always kept,
// so its logprob stays finite when the current policy would have cut it (see
// `supportOfRow`).
import { ModelInputError } from "../errors.js";

export interface SamplingDistribution {
  /** Logits are divided by this (> 0). */
  temperature: number;
  /** Keep only the k most likely tokens; 0 keeps all. */
  topK: number;
  /** Keep the smallest most-likely set whose probability reaches p, in (0, 1]; 1 keeps all. */
  topP: number;
}

export const FULL_DISTRIBUTION: SamplingDistribution = Object.freeze({ temperature: 1, topK: 0, topP: 1 });

export function validateSamplingDistribution(d: SamplingDistribution): void {
  if (!(d.temperature > 0) || !Number.isFinite(d.temperature)) {
    throw new ModelInputError(`temperature ${d.temperature} must be a positive number`);
  }
  if (!Number.isInteger(d.topK) || d.topK < 0) throw new ModelInputError(`top_k ${d.topK} must be an integer >= 0 (0 keeps every token)`);
  if (!(d.topP > 0 && d.topP <= 1)) throw new ModelInputError(`top_p ${d.topP} must be in (0, 1] (1 keeps every token)`);
}

/** True when top-k or top-p cut the vocabulary (a temperature alone keeps every token). */
export function truncates(d: SamplingDistribution, vocabSize: number): boolean {
  return (d.topK > 0 && d.topK < vocabSize) || d.topP < 1;
}

/**
 * Ids kept by top-k then top-p, most likely first, for one row of temperature-scaled
 * logits `z` (length = vocabulary). `weights` are exp(z − max z), given so that callers
 * that already have them do not recompute them.
 */
export function keptTokens(z: ArrayLike<number>, weights: ArrayLike<number>, d: SamplingDistribution): number[] {
  const vocab = z.length;
  const byLikelihood = (a: number, b: number) => z[b]! - z[a]! || a - b;
  let candidates: number[];
  if (d.topK > 0 && d.topK < vocab) {
    candidates = Array.from({ length: vocab }, (_, i) => i)
      .sort(byLikelihood)
      .slice(0, d.topK);
  } else if (d.topP < 1) {
    // Only tokens that could be in the nucleus need sorting: every token above a
    // threshold t comes before every token at or below it, so once the mass above t
    // reaches top_p the nucleus lies inside that set (grow t's set until it does).
    let total = 0;
    for (let i = 0; i < vocab; i++) total += weights[i]!;
    candidates = [];
    for (let threshold = 0.1; ; threshold /= 16) {
      candidates = [];
      let mass = 0;
      for (let i = 0; i < vocab; i++) {
        if (weights[i]! > threshold || threshold < 1e-30) {
          candidates.push(i);
          mass += weights[i]!;
        }
      }
      if (mass >= d.topP * total || threshold < 1e-30) break;
    }
    candidates.sort(byLikelihood);
  } else {
    return Array.from({ length: vocab }, (_, i) => i);
  }
  if (d.topP < 1) {
    // The nucleus within the top-k set: keep adding the next most likely token while the
    // kept mass is below top_p of the set's mass (vLLM's rule: a token is cut when the
    // tokens more likely than it already reach top_p).
    let setMass = 0;
    if (d.topK > 0 && d.topK < vocab) for (const id of candidates) setMass += weights[id]!;
    else for (let i = 0; i < vocab; i++) setMass += weights[i]!;
    let kept = 0;
    let cumulative = 0;
    while (kept < candidates.length && cumulative < d.topP * setMass) cumulative += weights[candidates[kept++]!]!;
    candidates = candidates.slice(0, Math.max(1, kept));
  }
  return candidates;
}

/**
 * 0/1 support of one row for the learner: the tokens top-k/top-p keep under the logits
 * being scored, plus `sampled` (the token the sampler drew). Keeping the sampled token is
 * our rule: when the policy being scored (current, old or reference) would have cut it,
 * its logprob is still finite (it competes with the kept set) rather than −∞, which would
 * make ratios and KL undefined.
 */
export function supportOfRow(z: ArrayLike<number>, d: SamplingDistribution, sampled: number, into: Float32Array): void {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < z.length; i++) max = Math.max(max, z[i]!);
  const weights = new Float64Array(z.length);
  for (let i = 0; i < z.length; i++) weights[i] = Math.exp(z[i]! - max);
  into.fill(0);
  for (const id of keptTokens(z, weights, d)) into[id] = 1;
  into[sampled] = 1;
}
