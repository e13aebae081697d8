"""The knobs of a GRPO-family loss, resolved from an algorithm's defaults and algorithm_config;
every algorithm is a point in this space (grpo-math §13)."""
from __future__ import annotations

from dataclasses import dataclass

SCALE_REWARDS = ("group", "batch", "none")
KL_ESTIMATORS = ("k1", "k2", "k3", "abs")
LOSS_AGGREGATIONS = ("seq-mean-token-mean", "token-mean", "seq-mean-token-sum-norm")
ADVANTAGE_ESTIMATORS = ("grpo", "passk")  # r − group mean, or pass@k's (pass_at_k.py)
POLICY_OBJECTIVES = ("clip", "cispo", "sapo")  # PPO clip, CISPO's stop-gradient weight, SAPO's soft gate (policy_loss.py)
IMPORTANCE_SAMPLING_LEVELS = ("token", "sequence")
IMPORTANCE_SAMPLING_ACTIONS = ("truncate", "mask")


@dataclass(frozen=True)
class LossSettings:
    temperature: float
    scale_rewards: str
    advantage_epsilon: float
    level: str  # "token" (GRPO, DAPO) or "sequence" (GSPO)
    epsilon_low: float
    epsilon_high: float
    delta: float | None  # two-sided clipping cap for negative advantages; None is off
    beta: float
    kl_estimator: str
    aggregation: str
    max_completion_length: int
    mask_truncated_completions: bool
    importance_sampling_cap: float | None  # rollout correction: upper bound of exp(old − sampler); None is off
    importance_sampling_min: float | None  # lower bound; None is none
    importance_sampling_level: str  # "token" or "sequence" (exp of the summed log ratio)
    importance_sampling_action: str  # "truncate" (clamp to the bounds) or "mask" (zero out of them)
    dynamic_sampling: bool
    dpo_coef: float
    dpo_beta: float
    num_iterations: int
    objective: str = "clip"
    advantage_estimator: str = "grpo"
    pass_k: int | None = None  # k of passk; None is the group size
    cispo_ratio_cap: float = 0.0  # CISPO: the weight sg(min(ratio, cap)) (ScaleRL's ε_max)
    sapo_temperature_positive: float = 0.0  # SAPO: gate temperature for A > 0
    sapo_temperature_negative: float = 0.0  # ... and for A ≤ 0
