"""Outcome advantages (grpo-math §2.2, §15.2): r − group mean, divided by (Bessel std + ε) of the
group or the batch, or not at all. A group of one has no std and gets 0 (TRL's nan_to_num)."""
from __future__ import annotations

import math
from dataclasses import dataclass


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


def group_advantages(rewards: list[float], group_ids: list[str], scale: str, epsilon: float) -> GroupAdvantages:
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
        for i in indices:
            a = rewards[i] - mean
            if scale == "group":
                a = a / (std + epsilon)
            elif scale == "batch":
                a = a / (batch_std + epsilon)
            advantages[i] = a if math.isfinite(a) else 0.0
    return GroupAdvantages(advantages, zero_std_groups, zero_std_samples / max(1, len(rewards)))
