"""GSPO (arXiv 2507.18071): one importance ratio per sequence, the geometric mean of its token
ratios, clipped at the sequence level with 3e-4 / 4e-4; no KL (grpo-math §9)."""
from .algorithm import Algorithm
from .common_parameters import common_parameters, common_settings

gspo = Algorithm(
    name="gspo",
    title="Group Sequence Policy Optimization",
    summary="Sequence-level importance ratio (length-normalised geometric mean of token ratios) and sequence-level "
    "clipping at 3e-4 / 4e-4: stable off-policy updates (num_iterations > 1), notably for MoE models; no KL.",
    parameters=common_parameters(scale_rewards="group", epsilon=3e-4, epsilon_high=4e-4, beta=0, loss_aggregation="seq-mean-token-mean"),
    settings=lambda values: common_settings(values, level="sequence"),
)
