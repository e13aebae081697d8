"""SAPO (Qwen, Soft Adaptive Policy Optimization, arXiv 2511.20347): a sigmoid gate
f(r) = σ(τ(r − 1))·4/τ on each token's ratio replaces the hard clip, τ_pos = 1.0 and τ_neg = 1.05
(TRL's defaults, loss_type="sapo"); per-sequence token mean, no KL. As services/learner/src/algorithms/sapo.ts."""
from .algorithm import Algorithm
from .common_parameters import common_settings, unclipped_parameters
from .parameters import ParameterSpec

sapo = Algorithm(
    name="sapo",
    title="Soft Adaptive Policy Optimization",
    summary="A temperature-controlled sigmoid gate on each token's ratio replaces the hard clip: off-policy tokens are "
    "attenuated smoothly (faster for negative advantages), keeping a signal the clip would drop; no KL.",
    parameters=[
        *unclipped_parameters(scale_rewards="group", epsilon=0, epsilon_high=None, beta=0, loss_aggregation="seq-mean-token-mean"),
        ParameterSpec("sapo_temperature_pos", "number", 1.0, "τ of the gate σ(τ(r − 1))·4/τ for tokens of positive advantage", above=0),
        ParameterSpec("sapo_temperature_neg", "number", 1.05, "τ of the gate for tokens of non-positive advantage (larger: damped faster)", above=0),
    ],
    settings=lambda values: common_settings(
        values, objective="sapo", sapo_temperature_positive=values["sapo_temperature_pos"], sapo_temperature_negative=values["sapo_temperature_neg"]
    ),
)
