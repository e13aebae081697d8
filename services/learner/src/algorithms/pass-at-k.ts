// The pass@k advantage: a prover is judged by pass@k (does any of k attempts prove it?), so
// the objective is E[max of k rewards], not the mean. Tang et al., "Optimizing Language Models
// for Inference Time Objectives using Reinforcement Learning" (arXiv 2503.19595), give the
// leave-one-out estimator for one set S of k samples: sample i ∈ S gets max S − max S∖{i}.
// Averaged over the C(n, k) subsets of a group of n:
//   A_i = (1 / C(n, k)) Σ_{S ∋ i, |S| = k} (max S − max S∖{i}).
// Only subsets where i is the strict maximum contribute (otherwise the two maxima agree). For
// k = n it is verl's grpo_passk (verl/trainer/ppo/core_algos.py, compute_grpo_passk_outcome_advantage):
// the best completion gets r_max − r_second, the others 0.
//
// Closed form: with the m rewards strictly below r_i sorted descending (l_1 ≥ … ≥ l_m), the
// (k−1)-subsets of them number C(m, k−1) and l_j is their maximum in C(m − j, k − 2) of them:
//   A_i = (r_i·C(m, k−1) − Σ_j l_j·C(m − j, k − 2)) / C(n, k).

function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  const kk = Math.min(k, n - k); // C(n, k) = C(n, n − k): the shorter product
  let out = 1;
  for (let j = 1; j <= kk; j++) out = (out * (n - kk + j)) / j;
  return out;
}

/** The pass@k advantages of one group's rewards (before any std scaling), 2 ≤ k ≤ rewards.length. */
export function passAtKAdvantages(rewards: readonly number[], k: number): number[] {
  const subsets = binomial(rewards.length, k);
  return rewards.map((r) => {
    const lower = rewards.filter((v) => v < r).sort((a, b) => b - a);
    let sum = r * binomial(lower.length, k - 1);
    lower.forEach((l, j) => {
      sum -= l * binomial(lower.length - j - 1, k - 2);
    });
    return sum / subsets;
  });
}
