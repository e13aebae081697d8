"""Global L2-norm clipping as torch.nn.utils.clip_grad_norm_ (scale = min(1, max / (norm + 1e-6)));
returns the norm before clipping."""
from __future__ import annotations

import torch


def clip_by_global_norm(grads: list[torch.Tensor], max_norm: float | None) -> float:
    norm = float(torch.sqrt(sum((g.to(torch.float64).square().sum() for g in grads), torch.tensor(0.0, dtype=torch.float64))))
    if max_norm is not None:
        scale = min(1.0, max_norm / (norm + 1e-6))
        if scale < 1:
            for g in grads:
                g.mul_(scale)
    return norm
