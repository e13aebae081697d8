"""A validated batch made ready for the loss: advantages, the groups DAPO's dynamic sampling drops,
which rows stay in the loss, and the whole-batch denominators."""
from __future__ import annotations

from dataclasses import dataclass

from ..algorithms.advantages import group_advantages
from ..algorithms.dpo_term import preference_pairs
from ..algorithms.loss_settings import LossSettings
from .model_tokens import model_token_count
from .training_example import TrainingExample


@dataclass
class PreparedRow:
    example: TrainingExample
    index: int  # in the request
    advantage: float
    live: bool  # False when masked out of the loss (truncated, with mask_truncated_completions)


@dataclass
class BatchTotals:
    """Token counts are of the model's tokens (completion_mask true), the ones trained on."""

    sequences: int
    live_tokens: int
    tokens: int
    pairs: int


@dataclass
class PreparedBatch:
    mode: str  # "rl" | "sft"
    rows: list[PreparedRow]
    advantages: list[float]
    zero_std_groups: list[str]
    frac_reward_zero_std: float
    totals: BatchTotals


def prepare_batch(examples: list[TrainingExample], settings: LossSettings, mode: str) -> PreparedBatch:
    rewards = [e.reward for e in examples]
    groups = [e.group_id for e in examples]
    if mode == "rl":
        adv = group_advantages(rewards, groups, settings.scale_rewards, settings.advantage_epsilon, settings.advantage_estimator, settings.pass_k)
        advantages, zero_std, frac = adv.advantages, adv.zero_std_groups, adv.frac_reward_zero_std
    else:
        advantages, zero_std, frac = [0.0] * len(examples), [], 0.0
    dropped = set(zero_std) if mode == "rl" and settings.dynamic_sampling else set()
    rows = [
        PreparedRow(e, i, advantages[i], mode == "sft" or not (settings.mask_truncated_completions and e.truncated))
        for i, e in enumerate(examples)
        if e.group_id not in dropped
    ]
    pairs = len(preference_pairs([r.example.reward for r in rows], [r.example.group_id for r in rows])) if mode == "rl" and settings.dpo_coef != 0 else 0
    return PreparedBatch(
        mode,
        rows,
        advantages,
        zero_std,
        frac,
        BatchTotals(
            sequences=len(rows),
            live_tokens=sum(model_token_count(r.example) for r in rows if r.live),
            tokens=sum(model_token_count(r.example) for r in rows),
            pairs=pairs,
        ),
    )
