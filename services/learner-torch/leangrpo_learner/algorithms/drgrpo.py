"""Dr. GRPO (arXiv 2503.20783): no std division in the advantage, no 1/|o_i|; token sums over a
constant generation budget; β = 0 (grpo-math §7)."""
from .algorithm import Algorithm
from .common_parameters import common_parameters, common_settings

drgrpo = Algorithm(
    name="drgrpo",
    title="Dr. GRPO (GRPO Done Right)",
    summary="Removes GRPO's two biases: no std scaling of advantages (question difficulty) and no per-response length "
    "normalisation (wrong answers growing longer); token sums over a constant max_completion_length; no KL.",
    parameters=common_parameters(scale_rewards="none", epsilon=0.2, epsilon_high=None, beta=0, loss_aggregation="seq-mean-token-sum-norm"),
    settings=common_settings,
)
