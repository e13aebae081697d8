"""The clipped-surrogate loss of the GRPO family on one micro-batch (grpo-math §4.1, §4.2, §6, §9,
§10.2, §10.6, §15.3), in the [batch, C] right-aligned layout of completion_logprobs.

Each micro-batch's loss is its share of the whole step's loss: the denominators (sequences, live
tokens) are the whole batch's, so micro-batch gradients sum to the full-batch gradient."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .kl_estimators import kl_estimate
from .loss_settings import LossSettings
from .rollout_correction import LOG_RATIO_BOUND, rollout_correction_weights


@dataclass
class PolicyLossInputs:
    logp: torch.Tensor  # [b, C] current policy (carries gradient), 0 off the mask
    mask: torch.Tensor  # [b, C]
    old: torch.Tensor  # [b, C] logprobs before the update
    ref: torch.Tensor | None  # [b, C] reference logprobs
    sampler: torch.Tensor | None  # [b, C] sampler logprobs
    sampler_known: torch.Tensor | None  # [b, 1] 1 where the row has sampler logprobs
    advantages: torch.Tensor  # [b, 1]
    live: torch.Tensor  # [b, 1] 0 for rows masked out of the loss
    lengths: torch.Tensor  # [b, 1]


@dataclass
class PolicyLossTerms:
    loss: torch.Tensor
    clip_low: float  # sums over live tokens
    clip_high: float
    clip_region: float
    kl: float | None


def policy_loss(settings: LossSettings, x: PolicyLossInputs, sequences: int, live_tokens: int) -> PolicyLossTerms:
    live_mask = x.mask * x.live
    log_ratio = (x.logp - x.old).clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND)
    if settings.level == "sequence":
        ratio = torch.exp((log_ratio * x.mask).sum(1, keepdim=True) / x.lengths)
    else:
        ratio = torch.exp(log_ratio)
    per_token = policy_term(settings, ratio, x.logp, x.advantages)
    if settings.importance_sampling_cap is not None and x.sampler is not None:
        per_token = per_token * rollout_correction_weights(settings, x.old, x.sampler, x.sampler_known, x.mask)
    kl = kl_estimate(x.logp, x.ref, settings.kl_estimator) if x.ref is not None else None
    if settings.beta != 0:
        if kl is None:
            raise RuntimeError("policy_loss: beta ≠ 0 needs reference logprobs")
        per_token = per_token + settings.beta * kl
    masked = per_token * live_mask
    if settings.aggregation == "seq-mean-token-mean":
        live_lengths = (x.lengths * x.live).clamp(min=1)
        loss = (masked.sum(1, keepdim=True) / live_lengths).sum() / sequences
    elif settings.aggregation == "token-mean":
        loss = masked.sum() / max(1, live_tokens)
    else:
        loss = masked.sum() / (sequences * settings.max_completion_length)
    with torch.no_grad():
        r = torch.ones_like(x.logp) * ratio
        low, high = clipped_tokens(settings, r, x.advantages)
        low, high = low.to(x.logp.dtype) * live_mask, high.to(x.logp.dtype) * live_mask
        region = (low + high).clamp(max=1)
        kl_sum = float((kl * live_mask).sum()) if kl is not None else None
    return PolicyLossTerms(loss, float(low.sum()), float(high.sum()), float(region.sum()), kl_sum)


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
