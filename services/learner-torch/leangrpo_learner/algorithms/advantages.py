"""Outcome advantages (grpo-math §2.2, §15.2): r − group mean, divided by (Bessel std + ε) of the
group or the batch, or not at all. A group of one has no std and gets 0 (TRL's nan_to_num)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import AlgorithmConfigError
from .pass_at_k import pass_at_k_advantages


@dataclass
class GroupAdvantages:
    advantages: list[float]
    zero_std_groups: list[str]  # groups whose rewards are all equal (groups of one included)
    frac_reward_zero_std: float


def bessel_std(values: list[float]) -> float:
    if len(values) < 2:
        return math.nan
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def group_advantages(
    rewards: list[float], group_ids: list[str], scale: str, epsilon: float, estimator: str = "grpo", pass_k: int | None = None
) -> GroupAdvantages:
    """estimator "passk": the centred reward is the pass@k one (pass_at_k.py), k = pass_k or the group's size."""
    members: dict[str, list[int]] = {}
    for i, g in enumerate(group_ids):
        members.setdefault(g, []).append(i)
    batch_std = bessel_std(rewards)
    advantages = [0.0] * len(rewards)
    zero_std_groups: list[str] = []
    zero_std_samples = 0
    for group, indices in members.items():
        values = [rewards[i] for i in indices]
        mean = sum(values) / len(values)
        std = bessel_std(values)
        if max(values) == min(values):
            zero_std_groups.append(group)
        if std == 0:
            zero_std_samples += len(indices)
        centred = pass_at_k_advantages(values, _pass_k(pass_k, group, len(values))) if estimator == "passk" else None
        for position, i in enumerate(indices):
            a = centred[position] if centred is not None else rewards[i] - mean
            if scale == "group":
                a = a / (std + epsilon)
            elif scale == "batch":
                a = a / (batch_std + epsilon)
            advantages[i] = a if math.isfinite(a) else 0.0
    return GroupAdvantages(advantages, zero_std_groups, zero_std_samples / max(1, len(rewards)))


def _pass_k(k: int | None, group: str, size: int) -> int:
    chosen = size if k is None else k
    if chosen > size or chosen < 2:
        shown = "null (the group size)" if k is None else str(k)
        raise AlgorithmConfigError(
            f'algorithm_config.pass_k = {shown} does not fit group "{group}" of {size} completions; accepted: 2 <= pass_k <= the group size'
        )
    return chosen
