"""Per-token estimators of KL(π_θ ‖ π_ref) (Schulman, "Approximating KL"; grpo-math §5.1).
d = ref − logp is clamped to ±20 before exp: it changes nothing below that and keeps inf·0 = NaN out."""
import torch


def kl_estimate(logp: torch.Tensor, ref: torch.Tensor, estimator: str) -> torch.Tensor:
    diff = logp - ref
    if estimator == "k1":
        return diff
    if estimator == "k2":
        return 0.5 * diff.square()
    if estimator == "abs":
        return diff.abs()
    d = (-diff).clamp(-20, 20)
    return torch.exp(d) - d - 1
