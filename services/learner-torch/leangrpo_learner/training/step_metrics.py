"""A step's metrics, named as the TS learner (and the reference trainers) log them: TRL's names
with "/" written as "_". Token means are global (Σ over tokens / token count). Every token count and
length is of the model's tokens (the loss mask's true entries, model_tokens.py)."""
from __future__ import annotations

from dataclasses import dataclass

from ..algorithms.advantages import bessel_std
from ..algorithms.loss_settings import LossSettings
from ..algorithms.rollout_correction import rollout_correction_metrics
from .model_tokens import at_model_tokens, model_token_count
from .prepared_batch import PreparedBatch
from .step_gradients import StepGradients
from .training_example import TrainingExample


@dataclass
class UpdateRecord:
    gradients: StepGradients
    grad_norm: float
    learning_rate: float


def step_metrics(
    examples: list[TrainingExample], batch: PreparedBatch, updates: list[UpdateRecord], old, seconds: float, settings: LossSettings
) -> dict[str, float]:
    rewards = [e.reward for e in examples]
    lengths = [model_token_count(e) for e in examples]
    n = len(updates)

    def mean(f) -> float:
        return sum(f(u) for u in updates) / max(1, n)

    live_tokens = max(1, batch.totals.live_tokens)
    processed = sum(len(r.example.prompt_ids) + len(r.example.completion_ids) for r in batch.rows) * n
    metrics = {
        "loss": mean(lambda u: u.gradients.loss),
        "reward_mean": sum(rewards) / len(rewards),
        "reward_std": bessel_std(rewards) if len(rewards) > 1 else 0.0,
        "frac_reward_zero_std": batch.frac_reward_zero_std,
        "entropy": mean(lambda u: u.gradients.entropy) / max(1, batch.totals.tokens),
        "completion_length_mean": sum(lengths) / len(lengths),
        "completion_length_min": float(min(lengths)),
        "completion_length_max": float(max(lengths)),
        "completion_clipped_ratio": sum(1 for e in examples if e.truncated) / len(examples),
        "grad_norm": mean(lambda u: u.grad_norm),
        "learning_rate": updates[-1].learning_rate if updates else 0.0,
        "tokens_per_second": processed / seconds if seconds > 0 else 0.0,
        "num_tokens": float(processed),
        "num_samples_trained": float(len(batch.rows)),
        "micro_batches": float(updates[0].gradients.micro_batches if updates else 0),
        "optimizer_updates": float(n),
    }
    if batch.mode == "rl":
        metrics["clip_ratio_low_mean"] = mean(lambda u: u.gradients.clip_low) / live_tokens
        metrics["clip_ratio_high_mean"] = mean(lambda u: u.gradients.clip_high) / live_tokens
        metrics["clip_ratio_region_mean"] = mean(lambda u: u.gradients.clip_region) / live_tokens
        if updates and all(u.gradients.kl is not None for u in updates):
            metrics["kl"] = mean(lambda u: u.gradients.kl) / live_tokens
        difference = _sampler_difference(batch, old)
        if difference is not None:
            metrics["sampling_logp_difference_mean"] = difference
        if old is not None:
            sampled = [
                (at_model_tokens(r.example, [float(v) for v in old[i]]), at_model_tokens(r.example, r.example.sampler_logprobs))
                for i, r in enumerate(batch.rows)
                if r.example.sampler_logprobs is not None
            ]
            metrics.update(rollout_correction_metrics(settings, sampled) or {})
    return metrics


def _sampler_difference(batch: PreparedBatch, old) -> float | None:
    """Mean |old − sampler| over the model's tokens whose sampler logprob is known: the engine mismatch."""
    if old is None:
        return None
    total, count = 0.0, 0
    for i, row in enumerate(batch.rows):
        if row.example.sampler_logprobs is None:
            continue
        before = at_model_tokens(row.example, list(old[i]))
        for t, s in enumerate(at_model_tokens(row.example, row.example.sampler_logprobs)):
            total += abs(before[t] - s)
            count += 1
    return total / count if count else None
