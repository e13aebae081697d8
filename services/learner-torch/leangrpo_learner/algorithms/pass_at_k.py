"""The pass@k advantage, as services/learner/src/algorithms/pass-at-k.ts: the leave-one-out max@k
estimator of Tang et al. (arXiv 2503.19595) averaged over the C(n, k) subsets of a group,
    A_i = (1 / C(n, k)) Σ_{S ∋ i, |S| = k} (max S − max S∖{i}),
in closed form (l_1 ≥ … ≥ l_m the rewards strictly below r_i):
    A_i = (r_i·C(m, k−1) − Σ_j l_j·C(m − j, k − 2)) / C(n, k).
For k = n it is verl's grpo_passk (core_algos.compute_grpo_passk_outcome_advantage): r_max − r_second
for the best completion, 0 for the others."""
from __future__ import annotations

from math import comb


def _binomial(n: int, k: int) -> int:
    return comb(n, k) if 0 <= k <= n else 0


def pass_at_k_advantages(rewards: list[float], k: int) -> list[float]:
    subsets = _binomial(len(rewards), k)
    out = []
    for r in rewards:
        lower = sorted((v for v in rewards if v < r), reverse=True)
        total = r * _binomial(len(lower), k - 1)
        for j, value in enumerate(lower):
            total -= value * _binomial(len(lower) - j - 1, k - 2)
        out.append(total / subsets)
    return out
