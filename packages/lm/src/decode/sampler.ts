// Picks the next token from one row of logits: greedy at temperature 0, otherwise a draw
// from softmax(logits / T) restricted to the top-k tokens and then to the smallest set
// whose probability reaches top-p (vLLM's order). The reported logprob is the token's
// log-probability under the full distribution at the temperature (before top-k/top-p),
// the number the learner computes for the same token, so importance ratios compare like
// with like (T = 1 for greedy).
import { ModelInputError } from "../errors.js";

export interface SamplingParams {
  /** 0 picks the most likely token. */
  temperature: number;
  /** Keep only the k most likely tokens; 0 keeps all. */
  topK: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p; 1 keeps all. */
  topP: number;
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

export function sampleToken(logits: Float32Array, params: SamplingParams, random: () => number): SampledToken {
  const temperature = params.temperature === 0 ? 1 : params.temperature;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]! / temperature);
  const weights = new Float64Array(logits.length);
  let total = 0;
  for (let i = 0; i < logits.length; i++) {
    weights[i] = Math.exp(logits[i]! / temperature - max);
    total += weights[i]!;
  }
  const logprobOf = (token: number) => logits[token]! / temperature - max - Math.log(total);
  if (params.temperature === 0) {
    const token = argmax(logits);
    return { token, logprob: logprobOf(token) };
  }

  let candidates: number[] | null = null; // null: the whole vocabulary, in id order
  if ((params.topK > 0 && params.topK < logits.length) || params.topP < 1) {
    // Most likely first; ties by id so the cut is deterministic.
    const order = Array.from(logits.keys()).sort((a, b) => weights[b]! - weights[a]! || a - b);
    candidates = params.topK > 0 ? order.slice(0, params.topK) : order;
    if (params.topP < 1) {
      const mass = candidates.reduce((sum, id) => sum + weights[id]!, 0);
      let kept = 0;
      let cumulative = 0;
      while (kept < candidates.length && cumulative < params.topP * mass) cumulative += weights[candidates[kept++]!]!;
      candidates = candidates.slice(0, Math.max(1, kept));
    }
  }

  const count = candidates ? candidates.length : logits.length;
  const idAt = candidates ? (k: number) => candidates[k]! : (k: number) => k;
  let mass = 0;
  for (let k = 0; k < count; k++) mass += weights[idAt(k)]!;
  let target = random() * mass;
  for (let k = 0; k < count; k++) {
    target -= weights[idAt(k)]!;
    if (target < 0) return { token: idAt(k), logprob: logprobOf(idAt(k)) };
  }
  // Rounding can leave a sliver past the end: it belongs to the last kept token.
  const last = idAt(count - 1);
  return { token: last, logprob: logprobOf(last) };
}
