"""An algorithm: a name, what it is for, its algorithm_config keys, and how they resolve to loss settings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

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
        return self.settings(resolve_parameters(self.name, self.parameters, config))
