"""DAPO (arXiv 2503.14476): clip-higher (0.2 / 0.28), token mean over the whole batch, no KL, and
dynamic sampling: groups with all-equal rewards leave the batch and are reported (grpo-math §8)."""
from .algorithm import Algorithm
from .common_parameters import common_parameters, common_settings
from .parameters import ParameterSpec

dapo = Algorithm(
    name="dapo",
    title="Decoupled Clip and Dynamic sAmpling Policy Optimization",
    summary="Long chain-of-thought RL without entropy collapse: clip-higher (0.2 / 0.28) lets rare tokens grow, "
    "a token-level loss over the whole batch weights long answers fully, groups with no reward spread are dropped "
    "(dynamic sampling) and reported for resampling; no KL.",
    parameters=[
        *common_parameters(scale_rewards="group", epsilon=0.2, epsilon_high=0.28, beta=0, loss_aggregation="token-mean"),
        ParameterSpec(
            "dynamic_sampling",
            "boolean",
            True,
            "groups whose rewards are all equal leave the batch (they are still reported in zero_std_groups)",
        ),
    ],
    settings=lambda values: common_settings(values, dynamic_sampling=values["dynamic_sampling"]),
)
