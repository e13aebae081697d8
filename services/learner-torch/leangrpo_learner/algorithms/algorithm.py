"""An algorithm: a name, what it is for, its algorithm_config keys, and how they resolve to loss settings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import AlgorithmConfigError
from .loss_settings import LossSettings
from .parameters import ParameterSpec, resolve_parameters


@dataclass(frozen=True)
class Algorithm:
    name: str
    title: str
    summary: str
    parameters: list[ParameterSpec]
    settings: Callable[[dict], LossSettings]

    def resolve(self, config: dict) -> LossSettings:
        settings = self.settings(resolve_parameters(self.name, self.parameters, config))
        return refuse_inert_correction_knobs(self.name, config, settings)


def refuse_inert_correction_knobs(algorithm: str, config: dict, settings: LossSettings) -> LossSettings:
    """The rollout correction's level, action and lower bound do nothing while importance_sampling_cap is null."""
    if "pass_k" in config and settings.advantage_estimator != "passk":
        raise AlgorithmConfigError(
            f'algorithm_config sets pass_k but advantage_estimator is "grpo" for "{algorithm}"; set advantage_estimator: passk or leave pass_k out'
        )
    knobs = [k for k in ("importance_sampling_min", "importance_sampling_level", "importance_sampling_action") if k in config]
    cap, low = settings.importance_sampling_cap, settings.importance_sampling_min
    if knobs and cap is None:
        raise AlgorithmConfigError(
            f"algorithm_config sets {', '.join(knobs)} but importance_sampling_cap is null for \"{algorithm}\", so the rollout "
            "correction is off; set importance_sampling_cap (e.g. 2) or leave them out"
        )
    if cap is not None and low is not None and not low < cap:
        raise AlgorithmConfigError(
            f"algorithm_config.importance_sampling_min = {low} is not below importance_sampling_cap = {cap}; " "accepted: a lower bound under the cap, or null"
        )
    return settings
