"""The clipped-surrogate loss of the GRPO family on one micro-batch (grpo-math §4.1, §4.2, §6, §9,
§10.2, §10.6, §15.3), in the [batch, C] right-aligned layout of completion_logprobs.

Each micro-batch's loss is its share of the whole step's loss: the denominators (sequences, live
tokens) are the whole batch's, so micro-batch gradients sum to the full-batch gradient."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .kl_estimators import kl_estimate
from .loss_settings import LossSettings
from .policy_objectives import clipped_tokens, policy_term
from .rollout_correction import LOG_RATIO_BOUND, rollout_correction_weights


@dataclass
class PolicyLossInputs:
    logp: torch.Tensor  # [b, C] current policy (carries gradient), 0 off the completion
    mask: torch.Tensor  # [b, C] 1 on the model's completion tokens, 0 on the environment's (completion_mask) and padding
    old: torch.Tensor  # [b, C] logprobs before the update
    ref: torch.Tensor | None  # [b, C] reference logprobs
    sampler: torch.Tensor | None  # [b, C] sampler logprobs
    sampler_known: torch.Tensor | None  # [b, 1] 1 where the row has sampler logprobs
    advantages: torch.Tensor  # [b, 1]
    live: torch.Tensor  # [b, 1] 0 for rows masked out of the loss
    lengths: torch.Tensor  # [b, 1] the model's token count of each row


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
