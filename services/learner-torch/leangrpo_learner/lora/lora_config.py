"""LoRA settings as PEFT names them: W' = W + scaling·B·A, scaling = alpha/r or alpha/√r (rsLoRA)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import AdapterError
from ..model.linear_modules import LINEAR_MODULES


@dataclass(frozen=True)
class LoraConfig:
    rank: int
    alpha: float
    target_modules: tuple[str, ...]
    dropout: float = 0.0
    use_rslora: bool = False

    @property
    def scaling(self) -> float:
        return self.alpha / math.sqrt(self.rank) if self.use_rslora else self.alpha / self.rank


def validated_lora_config(config: LoraConfig, accepted_modules: tuple[str, ...] | None = LINEAR_MODULES) -> LoraConfig:
    """Checks each field, naming the first bad one. With accepted_modules (the native model's seven
    linears) targets must be among them and are put in the model's order; with None (the
    transformers source, where PEFT matches names against the model) any module names pass."""
    if isinstance(config.rank, bool) or not isinstance(config.rank, int) or config.rank <= 0:
        raise AdapterError(f"LoRA rank {config.rank!r} must be a positive integer")
    if not isinstance(config.alpha, (int, float)) or not config.alpha > 0 or not math.isfinite(config.alpha):
        raise AdapterError(f"LoRA alpha {config.alpha!r} must be a positive number")
    if not isinstance(config.dropout, (int, float)) or not 0 <= config.dropout < 1:
        raise AdapterError(f"LoRA dropout {config.dropout!r} must be in [0, 1)")
    if not config.target_modules:
        raise AdapterError(f"LoRA target modules must be a non-empty list of: {', '.join(accepted_modules or LINEAR_MODULES)}")
    for module in config.target_modules:
        if not isinstance(module, str) or not module:
            raise AdapterError(f"LoRA target module {module!r} must be a non-empty module name")
        if accepted_modules is not None and module not in accepted_modules:
            raise AdapterError(f"LoRA target module {module!r} is not known; accepted: {', '.join(accepted_modules)}")
    if len(set(config.target_modules)) != len(config.target_modules):
        raise AdapterError(f"LoRA target modules [{', '.join(config.target_modules)}] list a module twice")
    ordered = tuple(m for m in LINEAR_MODULES if m in config.target_modules) if accepted_modules is not None else tuple(config.target_modules)
    return LoraConfig(config.rank, float(config.alpha), ordered, float(config.dropout), bool(config.use_rslora))
