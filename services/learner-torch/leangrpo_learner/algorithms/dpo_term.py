"""DGPO's pairwise DPO term: for each group's (best, worst) completion,
−log σ(β·[(Σ logp − Σ ref)(best) − (Σ logp − Σ ref)(worst)]), summed over this micro-batch's pairs
and divided by the step's pair count. −log σ(z) = softplus(−z), stable for any z."""
from __future__ import annotations

import torch
import torch.nn.functional as F


def preference_pairs(rewards: list[float], group_ids: list[str]) -> list[tuple[int, int]]:
    """(best, worst) rows of each group with a reward spread; the first row wins ties."""
    members: dict[str, list[int]] = {}
    for i, g in enumerate(group_ids):
        members.setdefault(g, []).append(i)
    pairs = []
    for rows in members.values():
        best = worst = rows[0]
        for row in rows:
            if rewards[row] > rewards[best]:
                best = row
            if rewards[row] < rewards[worst]:
                worst = row
        if rewards[best] != rewards[worst]:
            pairs.append((best, worst))
    return pairs


def dpo_pair_loss(logp, ref, mask, pairs: list[tuple[int, int]], beta: float, total_pairs: int) -> torch.Tensor:
    if not pairs:
        return logp.sum() * 0
    implicit = ((logp - ref) * mask).sum(1)
    best = torch.tensor([p[0] for p in pairs], device=logp.device)
    worst = torch.tensor([p[1] for p in pairs], device=logp.device)
    z = beta * (implicit[best] - implicit[worst])
    return F.softplus(-z).sum() / total_pairs
