"""Learning-rate multipliers with linear warm-up, as transformers' get_{constant,linear,cosine}_schedule_with_warmup."""
import math

LR_SCHEDULES = ("constant", "linear", "cosine")


def learning_rate_multiplier(name: str, warmup_steps: int, total_steps: int, step: int) -> float:
    """Multiplier of update `step` (0-based)."""
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    if name == "constant":
        return 1.0
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    if name == "linear":
        return max(0.0, 1 - progress)
    return max(0.0, 0.5 * (1 + math.cos(math.pi * progress)))
