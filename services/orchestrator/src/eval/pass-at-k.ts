// The unbiased pass@k estimator of Chen et al. 2021 (Codex, eq. 1): with n samples of
// which c are correct, pass@k = 1 − C(n−c, k) / C(n, k), computed as a product so that
// large n does not overflow the binomials.
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || c < 0 || c > n || k < 1 || k > n) {
    throw new RangeError(`pass@k needs integers 1 ≤ k ≤ n and 0 ≤ c ≤ n, got n=${n} c=${c} k=${k}`);
  }
  if (n - c < k) return 1;
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}

/**
 * The k values of one evaluation, ascending without repeats: each a positive integer no
 * larger than the samples per problem (pass@k of n samples needs k ≤ n).
 */
export function checkPassAtKs(ks: readonly number[], samples: number): number[] {
  if (!Number.isInteger(samples) || samples < 1) throw new RangeError(`samples must be a positive integer, got ${samples}`);
  if (ks.length === 0) throw new RangeError("give at least one k");
  for (const k of ks) {
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
    if (k > samples)
      throw new RangeError(
        `k ${k} is larger than samples ${samples}: pass@k needs at least k completions per problem; raise samples to ${k} or more`,
      );
  }
  return [...new Set(ks)].sort((a, b) => a - b);
}
