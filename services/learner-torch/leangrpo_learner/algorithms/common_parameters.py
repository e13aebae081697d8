"""The algorithm_config keys every clipped-surrogate algorithm shares, with TRL's names and the
seed's names as aliases (truncated_is, clip_low/clip_high, kl_estimator schulman/mse)."""
from __future__ import annotations

from ..errors import AlgorithmConfigError
from .loss_settings import (
    ADVANTAGE_ESTIMATORS,
    IMPORTANCE_SAMPLING_ACTIONS,
    IMPORTANCE_SAMPLING_LEVELS,
    KL_ESTIMATORS,
    LOSS_AGGREGATIONS,
    SCALE_REWARDS,
    LossSettings,
)
from .parameters import ParameterSpec

KL_ALIASES = {"schulman": "k3", "mse": "k2", "abs": "abs"}


def common_parameters(scale_rewards: str, epsilon: float, epsilon_high: float | None, beta: float, loss_aggregation: str) -> list[ParameterSpec]:
    return [
        ParameterSpec("temperature", "number", 1, "sampling temperature; logits are divided by it, as the sampler did", above=0),
        ParameterSpec(
            "scale_rewards",
            "enum",
            scale_rewards,
            "advantage = r − group mean, divided by the group's or the batch's Bessel std (+1e-4), or not (none)",
            allowed=SCALE_REWARDS,
        ),
        ParameterSpec("epsilon", "number", epsilon, "lower clip: ratios below 1 − epsilon stop pushing down", min=0, max=1, aliases=("clip_low",)),
        ParameterSpec(
            "epsilon_high",
            "number",
            epsilon_high,
            "upper clip: ratios above 1 + epsilon_high stop pushing up; null means = epsilon",
            min=0,
            nullable=True,
            aliases=("clip_high",),
        ),
        ParameterSpec(
            "delta",
            "number",
            None,
            "two-sided clipping: the ratio is capped at delta for negative advantages (INTELLECT-2 used 4); null is off",
            above=1,
            nullable=True,
        ),
        ParameterSpec("beta", "number", beta, "KL coefficient against the reference policy (adapter disabled)", min=0),
        ParameterSpec(
            "kl_estimator",
            "enum",
            "k3",
            "k1 = logp − ref, k2 = ½(logp − ref)², k3 = exp(ref − logp) − (ref − logp) − 1, abs = |logp − ref|; seed schulman = k3, mse = k2",
            allowed=(*KL_ESTIMATORS, *(k for k in KL_ALIASES if k != "abs")),
        ),
        ParameterSpec(
            "loss_aggregation",
            "enum",
            loss_aggregation,
            "seq-mean-token-mean (GRPO), token-mean over the batch (DAPO), seq-mean-token-sum-norm (Dr. GRPO: Σ tokens / max_completion_length)",
            allowed=LOSS_AGGREGATIONS,
        ),
        ParameterSpec("max_completion_length", "integer", 512, "the constant normaliser of seq-mean-token-sum-norm (the generation budget)", min=1),
        ParameterSpec(
            "mask_truncated_completions",
            "boolean",
            False,
            "completions cut by max_tokens leave the loss (they still count in the advantages)",
        ),
        ParameterSpec(
            "importance_sampling_cap",
            "number",
            None,
            "rollout correction against the sampler (TRL vllm_importance_sampling_cap, verl rollout_is_threshold): "
            "upper bound of the weight exp(old − sampler logprob); null turns the correction off",
            above=0,
            nullable=True,
            aliases=("truncated_is",),
        ),
        ParameterSpec(
            "importance_sampling_min",
            "number",
            None,
            "rollout correction: lower bound of the weight (TRL vllm_importance_sampling_clip_min); null is none",
            min=0,
            nullable=True,
        ),
        ParameterSpec(
            "importance_sampling_level",
            "enum",
            "sequence",
            "rollout correction: one weight per token, or per sequence = exp(Σ (old − sampler)) (TRL's default, sequence)",
            allowed=IMPORTANCE_SAMPLING_LEVELS,
        ),
        ParameterSpec(
            "importance_sampling_action",
            "enum",
            "mask",
            "rollout correction: a weight out of bounds is clamped to them (truncate) or zeroed, leaving the loss (mask, TRL's default)",
            allowed=IMPORTANCE_SAMPLING_ACTIONS,
        ),
        ParameterSpec(
            "num_iterations",
            "integer",
            1,
            "μ: optimizer updates on the same batch, ratios against the logprobs taken before the first",
            min=1,
            max=64,
        ),
        ParameterSpec(
            "advantage_estimator",
            "enum",
            "grpo",
            "grpo: r − group mean; passk: the pass@k leave-one-out advantage (Tang et al. 2503.19595; verl grpo_passk when "
            "pass_k = the group size), then scale_rewards",
            allowed=ADVANTAGE_ESTIMATORS,
        ),
        ParameterSpec(
            "pass_k",
            "integer",
            None,
            "k of advantage_estimator passk (2 ≤ k ≤ the group size); null is the group size (verl's grpo_passk)",
            min=2,
            nullable=True,
        ),
    ]


def _kl_estimator(value) -> str:
    if value in KL_ESTIMATORS:
        return value
    if value in KL_ALIASES:
        return KL_ALIASES[value]
    raise AlgorithmConfigError(f"kl_estimator {value!r} is not known")


def unclipped_parameters(**defaults) -> list[ParameterSpec]:
    """The common keys without the PPO clip (epsilon, epsilon_high, delta): for objectives that do not clip."""
    return [p for p in common_parameters(**defaults) if p.name not in ("epsilon", "epsilon_high", "delta")]


def common_settings(values: dict, **overrides) -> LossSettings:
    # CISPO and SAPO have no clip range (their own knobs replace epsilon and epsilon_high).
    epsilon = values.get("epsilon", 0.0)
    settings = dict(
        temperature=values["temperature"],
        scale_rewards=values["scale_rewards"],
        advantage_estimator=values["advantage_estimator"],
        pass_k=values["pass_k"],
        advantage_epsilon=1e-4,
        level="token",
        epsilon_low=epsilon,
        epsilon_high=values["epsilon_high"] if values.get("epsilon_high") is not None else epsilon,
        delta=values.get("delta"),
        beta=values["beta"],
        kl_estimator=_kl_estimator(values["kl_estimator"]),
        aggregation=values["loss_aggregation"],
        max_completion_length=values["max_completion_length"],
        mask_truncated_completions=values["mask_truncated_completions"],
        importance_sampling_cap=values["importance_sampling_cap"],
        importance_sampling_min=values["importance_sampling_min"],
        importance_sampling_level=values["importance_sampling_level"],
        importance_sampling_action=values["importance_sampling_action"],
        dynamic_sampling=False,
        dpo_coef=0.0,
        dpo_beta=0.0,
        num_iterations=values["num_iterations"],
    )
    settings.update(overrides)
    return LossSettings(**settings)
