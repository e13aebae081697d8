"""GRPO (DeepSeekMath): group-normalised advantages, token-level clipped ratios, per-sequence token
means averaged over sequences, and a k3 KL to the reference with β = 0.04 (grpo-math §2.1, §4.1, §5, §13)."""
from .algorithm import Algorithm
from .common_parameters import common_parameters, common_settings

GRPO_DEFAULTS = dict(scale_rewards="group", epsilon=0.2, epsilon_high=None, beta=0.04, loss_aggregation="seq-mean-token-mean")

grpo = Algorithm(
    name="grpo",
    title="Group Relative Policy Optimization",
    summary="DeepSeekMath's algorithm: advantages normalised within each prompt's group, token-level clipped ratios, "
    "per-sequence token means averaged over sequences, k3 KL to the reference (β = 0.04). The baseline of the family.",
    parameters=common_parameters(**GRPO_DEFAULTS),
    settings=common_settings,
)
