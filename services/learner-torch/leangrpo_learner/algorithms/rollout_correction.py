"""Rollout correction: each completion's loss is weighted by w = π_old / π_sampler, as TRL and verl do it.

    level token:     w_t = exp(old_t − sampler_t)
    level sequence:  w   = exp(Σ_t (old_t − sampler_t))         (TRL sequence_*, verl rollout_is=sequence)
    action truncate: w ← clamp(w, min, cap)                       (TRL *_truncate, verl TIS)
    action mask:     w ← 0 where w > cap or w < min               (TRL *_mask, verl rollout_rs)

Rows without sampler logprobs keep weight 1; the log ratio is bounded at ±20 before exp (verl's
SAFETY_BOUND). TRL: trl/trainer/grpo_trainer.py (_generate_and_score_completions); verl:
verl/trainer/ppo/rollout_corr_helper.py (compute_rollout_correction_weights, compute_offpolicy_metrics).
The same definitions as services/learner/src/algorithms/rollout-correction.ts."""
from __future__ import annotations

import math

import torch

from .loss_settings import LossSettings

LOG_RATIO_BOUND = 20.0


def rollout_correction_weights(settings: LossSettings, old, sampler, known, mask) -> torch.Tensor:
    """[b, C] (token) or [b, 1] (sequence) weights; `known` is [b, 1], 1 where the row has sampler logprobs."""
    cap = settings.importance_sampling_cap
    if cap is None:
        raise RuntimeError("rollout_correction_weights: the correction is off (importance_sampling_cap is None)")
    log_ratio = (old - sampler) * mask
    if settings.importance_sampling_level == "sequence":
        log_ratio = log_ratio.sum(1, keepdim=True)
    raw = torch.exp(log_ratio.clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND))
    low = settings.importance_sampling_min
    if settings.importance_sampling_action == "truncate":
        weight = raw.clamp(min=low if low is not None else 0.0, max=cap)
    else:
        outside = raw > cap
        if low is not None:
            outside = outside | (raw < low)
        weight = raw.masked_fill(outside, 0.0)
    return weight * known + (1 - known)


def _bounded(x: float) -> float:
    return min(LOG_RATIO_BOUND, max(-LOG_RATIO_BOUND, x))


def row_correction(settings: LossSettings, old: list[float], sampler: list[float]) -> tuple[list[float], list[float]]:
    """One row's weights per token (a sequence weight repeated): raw (bounded) and as the loss applies them."""
    log_ratios = [o - s for o, s in zip(old, sampler)]
    cap, low = settings.importance_sampling_cap, settings.importance_sampling_min
    # With the correction off, the metrics describe the token-level ratios.
    if cap is not None and settings.importance_sampling_level == "sequence":
        raw = [math.exp(_bounded(sum(log_ratios)))] * len(log_ratios)
    else:
        raw = [math.exp(_bounded(d)) for d in log_ratios]
    if cap is None:
        return raw, raw
    if settings.importance_sampling_action == "truncate":
        return raw, [min(cap, max(low if low is not None else 0.0, w)) for w in raw]
    return raw, [0.0 if (w > cap or (low is not None and w < low)) else w for w in raw]


def rollout_correction_metrics(settings: LossSettings, rows: list[tuple[list[float], list[float]]]) -> dict[str, float] | None:
    """verl's rollout_corr metrics ("/" written "_") over the tokens of rows (old, sampler); None without any."""
    rows = [(o, s) for o, s in rows if len(o) > 0]
    if not rows:
        return None
    cap, low = settings.importance_sampling_cap, settings.importance_sampling_min
    tokens = 0
    kl = k3 = rho2 = seq_rho2 = ppl_ratio = weight_sum = weight_squares = 0.0
    masked = high = below = 0
    for old, sampler in rows:
        n = len(old)
        diffs = [o - s for o, s in zip(old, sampler)]
        kl += sum(-d for d in diffs)
        k3 += sum(math.exp(d) - d - 1 for d in diffs)
        rho2 += sum(math.exp(2 * _bounded(d)) for d in diffs)
        seq_rho2 += math.exp(2 * _bounded(sum(diffs)))
        ppl_ratio += math.exp(sum(sampler) / n - sum(old) / n)  # learner / sampler perplexity of the row
        raw, applied = row_correction(settings, old, sampler)
        for r, w in zip(raw, applied):
            weight_sum += w
            weight_squares += w * w
            if cap is not None:
                high += r > cap
                below += low is not None and r < low
                masked += settings.importance_sampling_action == "mask" and w == 0
        tokens += n
    metrics = {
        "rollout_corr_kl": kl / tokens,
        "rollout_corr_k3_kl": k3 / tokens,
        "rollout_corr_chi2_token": rho2 / tokens - 1,
        "rollout_corr_chi2_seq": seq_rho2 / len(rows) - 1,
        "rollout_corr_ppl_ratio": ppl_ratio / len(rows),
        # Normalised ESS of the weights the loss applies: (Σw)² / (N Σw²).
        "rollout_corr_rollout_is_eff_sample_size": weight_sum * weight_sum / (tokens * weight_squares) if weight_squares > 0 else 0.0,
    }
    if cap is not None:
        metrics["rollout_corr_rollout_is_ratio_fraction_high"] = high / tokens
        metrics["rollout_corr_rollout_is_ratio_fraction_low"] = below / tokens
        metrics["rollout_corr_rollout_rs_masked_fraction"] = masked / tokens
    return metrics
