"""The loss mask of a multi-turn trajectory (TrainingSample.completion_mask), as
services/learner/src/training/model-tokens.ts: which completion tokens the model wrote (trained on)
and which the environment inserted (Lean's errors, the checker's feedback: they condition what
follows, so they stay in the forward pass, but no logprob ratio, KL, clip count, entropy or length
normaliser counts them). verl calls it response_mask; TRL masks tool results the same way.
No mask (None or empty): every token is the model's."""
from __future__ import annotations

from typing import Sequence, TypeVar

import torch

from .training_example import TrainingExample

T = TypeVar("T")


def model_token_count(example: TrainingExample) -> int:
    """How many completion tokens are the model's: the length every normaliser and length metric uses."""
    mask = example.completion_mask
    return sum(1 for m in mask if m) if mask else len(example.completion_ids)


def at_model_tokens(example: TrainingExample, values: Sequence[T]) -> list[T]:
    """The entries of a per-completion-token list (old, sampler logprobs) at the model's tokens."""
    mask = example.completion_mask
    return [v for v, m in zip(values, mask) if m] if mask else list(values)


def loss_mask(completion_mask: torch.Tensor, examples: list[TrainingExample]) -> torch.Tensor:
    """completion_logprobs' [b, C] mask (1 on completion tokens) narrowed to the model's tokens, in the
    same right-aligned layout; the mask itself when no row carries a loss mask."""
    if not any(e.completion_mask for e in examples):
        return completion_mask
    window = completion_mask.shape[1]
    model = torch.zeros_like(completion_mask)
    for r, e in enumerate(examples):
        flags = e.completion_mask or [True] * len(e.completion_ids)
        model[r, window - len(flags) :] = torch.tensor(flags, dtype=completion_mask.dtype)
    return completion_mask * model
