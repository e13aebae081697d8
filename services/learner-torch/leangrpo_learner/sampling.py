"""The sampling distribution logprobs are taken under (TrainStepHeader.sampling,
ComputeLogprobsRequest.sampling): softmax(logits / T) restricted to the top-k tokens, then to
the smallest most-likely set whose probability reaches top-p (vLLM's order, ties broken by the
lower id, as packages/lm's sampler cuts), renormalised. The sampled token always stays in the
support, so its logprob stays finite after the policy has moved. With a reasoning vocabulary the
reasoning mask (reasoning/block_mask.py) comes before all of that: ids it excludes in a token's
block state get −∞ (`reasoning_mask`, SamplingDistribution.reasoning_mask on the wire).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .reasoning.block_mask import MASK_OF_PROTO
from .reasoning.logits_mask import RowMask, mask_logits


@dataclass(frozen=True)
class SamplingDistribution:
    temperature: float = 1.0
    top_k: int = 0  # 0 keeps every token
    top_p: float = 1.0  # 1 keeps every token
    # free | gated | strict (docs/concepts/reasoning-vocabulary.md); None: the service's model.reasoning_mask
    reasoning_mask: str | None = None

    @property
    def truncates(self) -> bool:
        return self.top_k > 0 or self.top_p < 1


# What greedy decoding (temperature 0) is scored under: samplers report the greedy token's
# logprob under the untruncated temperature-1 distribution (common.proto SamplingDistribution).
GREEDY = SamplingDistribution()

# Two temperatures sent as float32 and double agree to this relative error.
FLOAT32_AGREEMENT = 1e-6


@dataclass(frozen=True)
class SamplingMessage:
    """A SamplingDistribution message as received (temperature 0: greedy; top_p 0: unset, i.e. 1)."""

    temperature: float
    top_k: int
    top_p: float
    reasoning_mask: int = 0  # ReasoningMask enum value; 0 (unspecified) is free

    @staticmethod
    def of(message) -> "SamplingMessage":
        return SamplingMessage(float(message.temperature), int(message.top_k), float(message.top_p), int(getattr(message, "reasoning_mask", 0)))


def resolve_sampling(message: SamplingMessage | None, legacy: tuple[float, str] | None, field: str) -> SamplingDistribution:
    """The one reading of a request's sampling settings, as the TS learner's step-sampling.ts: the
    message (None when the field is unset) and an older single temperature with its field name
    (algorithm_config.temperature, ComputeLogprobsRequest.temperature; None when not given). When
    both are given they must agree. ValueError names the fields."""
    if message is None:
        return GREEDY if legacy is None else SamplingDistribution(temperature=float(legacy[0]))
    if not math.isfinite(message.temperature) or message.temperature < 0:
        raise ValueError(f"{field}.temperature is {message.temperature:g}; accepted: a number >= 0 (0 is greedy decoding)")
    if not math.isfinite(message.top_p) or not 0 <= message.top_p <= 1:
        raise ValueError(f"{field}.top_p is {message.top_p:g}; accepted: (0, 1] (0 or unset means 1, no truncation)")
    if message.reasoning_mask not in MASK_OF_PROTO:
        raise ValueError(f"{field}.reasoning_mask is {message.reasoning_mask}; accepted: REASONING_MASK_UNSPECIFIED (free), FREE, GATED, STRICT")
    mask = MASK_OF_PROTO[message.reasoning_mask]
    if message.temperature == 0:
        resolved = SamplingDistribution(reasoning_mask=mask)  # greedy: scored at temperature 1, under the same mask
    else:
        resolved = SamplingDistribution(message.temperature, message.top_k, message.top_p if message.top_p != 0 else 1.0, mask)
    if legacy is not None:
        value, legacy_field = legacy
        if abs(value - resolved.temperature) > FLOAT32_AGREEMENT * max(1.0, abs(value), resolved.temperature):
            said = "0 (greedy decoding, scored under temperature 1)" if message.temperature == 0 else f"{message.temperature:g}"
            raise ValueError(
                f"{legacy_field} is {value:g} but {field}.temperature is {said}: they name the same sampling temperature; "
                f"leave {legacy_field} out (the {field} is the one source) or make them agree"
            )
    return resolved


def support_mask(scaled_logits: torch.Tensor, targets: torch.Tensor, sampling: SamplingDistribution) -> torch.Tensor | None:
    """[rows, vocab] bool: the tokens each row's truncated distribution keeps; None when nothing is cut."""
    vocab = scaled_logits.shape[-1]
    if not sampling.truncates or (sampling.top_k >= vocab and sampling.top_p >= 1):
        return None
    z = scaled_logits.detach().to(torch.float64)
    # Stable descending sort: equal logits keep id order, so the lower id is "more likely".
    order = torch.sort(z, dim=-1, descending=True, stable=True).indices
    weights = torch.exp(z - z.max(dim=-1, keepdim=True).values).gather(-1, order)
    k = sampling.top_k if 0 < sampling.top_k < vocab else vocab
    rank = torch.arange(vocab, device=z.device)
    keep_sorted = (rank < k).expand_as(weights)
    if sampling.top_p < 1:
        candidate = weights * keep_sorted
        mass = candidate.sum(-1, keepdim=True)
        before = candidate.cumsum(-1) - candidate  # probability mass of the more likely candidates
        keep_sorted = keep_sorted & (before < sampling.top_p * mass)
        keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    keep.scatter_(-1, targets[:, None], True)
    return keep


def token_logprobs_and_entropy(logits: torch.Tensor, targets: torch.Tensor, sampling: SamplingDistribution, row_mask: RowMask | None = None):
    """log p(target) and the entropy of each row's distribution, both differentiable in `logits` [rows, vocab].
    `row_mask`: the reasoning mask of each row, applied before top-k/top-p rank the row."""
    z = logits.to(torch.float32) / sampling.temperature
    if row_mask is not None:
        z = mask_logits(z, targets, row_mask)
    keep = support_mask(z, targets, sampling)
    if keep is not None:
        z = z.masked_fill(~keep, float("-inf"))
    logp = torch.log_softmax(z, dim=-1)
    target = logp.gather(-1, targets[:, None])[:, 0]
    p = logp.exp()
    # Tokens outside the support have p = 0 and logp = −inf; their 0·(−inf) must count as 0.
    entropy = -(p * logp.masked_fill(p == 0, 0)).sum(-1)
    return target, entropy
