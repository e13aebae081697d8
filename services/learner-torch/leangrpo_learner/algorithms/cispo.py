"""CISPO (MiniMax-M1, arXiv 2506.13585, eq. 4–5): the clipped importance weight is a stop-gradient
coefficient on −A·log π, so no token loses its gradient; only ratios above ε_max = 5 are truncated
(ScaleRL, arXiv 2510.13786; TRL loss_type="cispo" with epsilon_high = 5.0). Token mean over the
batch, no KL. As services/learner/src/algorithms/cispo.ts."""
from .algorithm import Algorithm
from .common_parameters import common_settings, unclipped_parameters
from .parameters import ParameterSpec

cispo = Algorithm(
    name="cispo",
    title="Clipped IS-weight Policy Optimization",
    summary="The clipped importance weight is a stop-gradient coefficient on −A·log π: every token, rare reflective ones "
    "included, keeps its gradient; only ratios above epsilon_max (5) are truncated; token mean over the batch; no KL.",
    parameters=[
        *unclipped_parameters(scale_rewards="group", epsilon=0, epsilon_high=None, beta=0, loss_aggregation="token-mean"),
        ParameterSpec(
            "epsilon_max",
            "number",
            5,
            "the weight sg(min(π / π_old, epsilon_max)) (ScaleRL's ε_max; TRL's epsilon_high for cispo)",
            above=0,
        ),
    ],
    settings=lambda values: common_settings(values, objective="cispo", cispo_ratio_cap=values["epsilon_max"]),
)
