"""One rollout sample as the learner trains on it: the exact ids the sampler saw and produced."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TrainingExample:
    sample_id: str  # caller's id, or "#<index>"; used in error messages
    group_id: str
    prompt_ids: list[int]
    completion_ids: list[int]
    sampler_logprobs: list[float] | None  # None when unknown
    reward: float
    truncated: bool
    # Per completion token: True where the model wrote it (trained on), False where the environment did
    # (conditioning only; model_tokens.py). None or empty: every token is the model's.
    completion_mask: list[bool] | None = None
