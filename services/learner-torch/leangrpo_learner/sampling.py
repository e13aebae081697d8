"""The sampling distribution logprobs are taken under (TrainStepHeader.sampling,
ComputeLogprobsRequest.sampling): softmax(logits / T) restricted to the top-k tokens, then to
the smallest most-likely set whose probability reaches top-p (vLLM's order, ties broken by the
lower id, as packages/lm's sampler cuts), renormalised. The sampled token always stays in the
support, so its logprob stays finite after the policy has moved.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class SamplingDistribution:
    temperature: float = 1.0
    top_k: int = 0  # 0 keeps every token
    top_p: float = 1.0  # 1 keeps every token

    @property
    def truncates(self) -> bool:
        return self.top_k > 0 or self.top_p < 1


def sampling_from_proto(message, field: str) -> SamplingDistribution:
    """Reads a SamplingDistribution message (0 = unset for temperature and top_p); ValueError names the field."""
    temperature = message.temperature if message.temperature != 0 else 1.0
    if not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"{field}.temperature {message.temperature} must be a positive number (0 means 1)")
    top_p = message.top_p if message.top_p != 0 else 1.0
    if not math.isfinite(top_p) or not 0 < top_p <= 1:
        raise ValueError(f"{field}.top_p {message.top_p} must be in (0, 1] (0 means 1, keep every token)")
    return SamplingDistribution(float(temperature), int(message.top_k), float(top_p))


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


def token_logprobs_and_entropy(logits: torch.Tensor, targets: torch.Tensor, sampling: SamplingDistribution):
    """log p(target) and the entropy of each row's distribution, both differentiable in `logits` [rows, vocab]."""
    z = logits.to(torch.float32) / sampling.temperature
    keep = support_mask(z, targets, sampling)
    if keep is not None:
        z = z.masked_fill(~keep, float("-inf"))
    logp = torch.log_softmax(z, dim=-1)
    target = logp.gather(-1, targets[:, None])[:, 0]
    p = logp.exp()
    # Tokens outside the support have p = 0 and logp = −inf; their 0·(−inf) must count as 0.
    entropy = -(p * logp.masked_fill(p == 0, 0)).sum(-1)
    return target, entropy
