"""The reasoning mask on a batch of logits rows (torch): excluded ids get −∞ before temperature,
top-k and top-p, as the sampler does. Each row carries its block state as a small code, so one
vectorised fill serves a whole chunk. The row's target (the sampled id) always stays in the
support, as for top-k/top-p (the TS learner's token-logprobs.ts does the same)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .block_mask import INSIDE, block_states, restricts

# Row codes: what a row's state excludes under the request's mode.
OPEN = 0  # nothing (free, or gated inside the block)
STANDARD_ONLY = 1  # gated/strict outside the block: reasoning ids excluded
REASONING_AND_END = 2  # strict inside the block: standard ids but the end marker's excluded


@dataclass(frozen=True)
class RowMask:
    """How the learner masks the rows of a scoring pass."""

    standard_size: int
    end_ids: tuple[int, ...]
    codes: torch.Tensor  # [rows] long, one code per scored row


def row_codes(completion_ids, vocabulary, mode: str) -> list[int]:
    """The code of each completion token's row under `mode`."""
    if mode == "free":
        return [OPEN] * len(completion_ids)
    states = block_states(completion_ids, vocabulary.map, vocabulary.markers.start_ids, vocabulary.markers.end_ids)
    return [OPEN if not restricts(s, mode) else (REASONING_AND_END if s == INSIDE else STANDARD_ONLY) for s in states]


def mask_logits(logits: torch.Tensor, targets: torch.Tensor, mask: RowMask) -> torch.Tensor:
    """logits [rows, vocab] with excluded ids at −∞ (a new tensor; differentiable in the kept entries)."""
    codes = mask.codes.to(logits.device)
    vocab = logits.shape[-1]
    reasoning = torch.arange(vocab, device=logits.device) >= mask.standard_size
    end = torch.zeros(vocab, dtype=torch.bool, device=logits.device)
    if mask.end_ids:
        end[list(mask.end_ids)] = True
    excluded = ((codes == STANDARD_ONLY)[:, None] & reasoning[None, :]) | ((codes == REASONING_AND_END)[:, None] & ~reasoning[None, :] & ~end[None, :])
    excluded.scatter_(-1, targets[:, None], False)
    return logits.masked_fill(excluded, float("-inf"))
