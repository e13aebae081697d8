"""The policy term of each objective (clip, CISPO, SAPO) and which tokens its bounds stopped, as
services/learner/src/algorithms/policy-objectives.ts; the ratio is per token [b, C] or per sequence [b, 1]."""
from __future__ import annotations

import torch

from .loss_settings import LossSettings


def policy_term(settings: LossSettings, ratio, logp, adv):
    """The per-token policy term (before the rollout correction, KL and aggregation), as policy-loss.ts:
    clip:  −min(r·A, clip(r, 1 − ε_low, 1 + ε_high)·A), r capped at δ first when set;
    cispo: −sg(min(r, ε_max))·A·log π (MiniMax-M1 eq. 4, ScaleRL's upper-only truncation, TRL loss_type="cispo");
    sapo:  −f(r)·A, f(r) = σ(τ(r − 1))·4/τ, τ = τ_pos if A > 0 else τ_neg (arXiv 2511.20347, TRL loss_type="sapo")."""
    if settings.objective == "cispo":
        return -ratio.clamp(max=settings.cispo_ratio_cap).detach() * adv * logp
    if settings.objective == "sapo":
        tau = torch.where(adv > 0, torch.full_like(adv, settings.sapo_temperature_positive), torch.full_like(adv, settings.sapo_temperature_negative))
        return -torch.sigmoid(tau * (ratio - 1)) * 4 / tau * adv
    capped = ratio.clamp(max=settings.delta) if settings.delta is not None else ratio
    clipped = ratio.clamp(1 - settings.epsilon_low, 1 + settings.epsilon_high)
    return -torch.minimum(capped * adv, clipped * adv)


def clipped_tokens(settings: LossSettings, r, adv):
    """Tokens a bound stopped: the clip's low and high sides; CISPO's truncation (r > ε_max) as high; none for SAPO."""
    if settings.objective == "cispo":
        return torch.zeros_like(r, dtype=torch.bool), r > settings.cispo_ratio_cap
    if settings.objective == "sapo":
        return torch.zeros_like(r, dtype=torch.bool), torch.zeros_like(r, dtype=torch.bool)
    return (r < 1 - settings.epsilon_low) & (adv < 0), (r > 1 + settings.epsilon_high) & (adv > 0)
