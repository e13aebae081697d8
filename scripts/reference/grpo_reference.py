"""An independent plain-PyTorch reference of the GRPO-family losses.

Written from ../../../shared/reference/grpo-math.md (sections 2, 3, 4.1, 4.2, 5.1, 6, 7, 8, 9, 10.2,
10.6 and 11), not from the TypeScript learner. It works on ragged lists of 1-D tensors
(one per completion, no padding), where the learner works on padded [batch, C] tensors,
so that a shared indexing bug cannot hide.

Everything the loss needs is passed in explicitly: the current logprobs (with gradient),
the old, reference and sampler logprobs (constants), rewards, group ids, truncation flags.
"""

import math

import torch
import torch.nn.functional as F


def group_indices(groups):
    by_group = {}
    for i, g in enumerate(groups):
        by_group.setdefault(g, []).append(i)
    return by_group


def bessel_std(values):
    """Unbiased std (divides by n - 1); NaN for fewer than two values, as TRL's nanstd."""
    if len(values) < 2:
        return float("nan")
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def advantages(rewards, groups, scale_rewards, eps=1e-4):
    """grpo-math 2.2(a) / 15.2: r - group mean, divided by (group or batch Bessel std + eps) unless "none"."""
    by_group = group_indices(groups)
    batch_std = bessel_std(rewards)
    out = [0.0] * len(rewards)
    for members in by_group.values():
        values = [rewards[i] for i in members]
        mean = sum(values) / len(values)
        std = bessel_std(values)
        for i in members:
            a = rewards[i] - mean
            if scale_rewards == "group":
                a = a / (std + eps)
            elif scale_rewards == "batch":
                a = a / (batch_std + eps)
            out[i] = a if math.isfinite(a) else 0.0
    return out


def zero_std_groups(rewards, groups):
    return [g for g, members in group_indices(groups).items() if max(rewards[i] for i in members) == min(rewards[i] for i in members)]


def kl_estimate(logp, ref, estimator):
    """grpo-math 5.1, with d = ref - logp."""
    d = ref - logp
    if estimator == "k1":
        return -d
    if estimator == "k2":
        return 0.5 * d * d
    if estimator == "k3":
        return torch.exp(d) - d - 1
    if estimator == "abs":
        return d.abs()
    raise ValueError(estimator)


def policy_loss(s, logp, old, ref, sampler, rewards, groups, truncated):
    """Loss of one batch and its metrics. s: dict of resolved settings (see make_algorithm_fixtures.py)."""
    adv = advantages(rewards, groups, s["scale_rewards"])
    zero = set(zero_std_groups(rewards, groups))
    # DAPO dynamic sampling: groups with no reward spread leave the batch (grpo-math 8.2).
    kept = [i for i in range(len(logp)) if not (s["dynamic_sampling"] and groups[i] in zero)]
    n_seq = len(kept)
    # mask_truncated_completions zeroes the mask, so those tokens leave token counts (10.2).
    live = {i: not (s["mask_truncated_completions"] and truncated[i]) for i in kept}
    n_tok = sum(len(logp[i]) for i in kept if live[i])
    total = 0
    low = high = region = kl_sum = 0.0
    per_seq = []
    for i in kept:
        lp, od = logp[i], old[i]
        length = len(lp)
        a = adv[i]
        log_ratio = torch.clamp(lp - od, -20, 20)
        if s["level"] == "sequence":
            ratio = torch.exp(log_ratio.sum() / length) * torch.ones(length)
        else:
            ratio = torch.exp(log_ratio)
        p1 = torch.minimum(ratio, torch.tensor(s["delta"])) if s["delta"] is not None else ratio
        p2 = torch.clamp(ratio, 1 - s["epsilon"], 1 + s["epsilon_high"])
        loss = -torch.minimum(p1 * a, p2 * a)
        if s["importance_sampling_cap"] is not None and sampler[i] is not None:
            weight = torch.clamp(torch.exp(torch.clamp(od - sampler[i], -20, 20)), max=s["importance_sampling_cap"])
            loss = loss * weight
        if s["beta"] != 0:
            kl = kl_estimate(lp, ref[i], s["kl_estimator"])
            loss = loss + s["beta"] * kl
        if not live[i]:
            loss = loss * 0
        per_seq.append((i, loss))
        if live[i]:
            with torch.no_grad():
                r = ratio.detach()
                lo = ((r < 1 - s["epsilon"]) & (a < 0)).float()
                hi = ((r > 1 + s["epsilon_high"]) & (a > 0)).float()
                low += float(lo.sum())
                high += float(hi.sum())
                region += float(((lo + hi) > 0).float().sum())
                if ref is not None:
                    kl_sum += float(kl_estimate(lp.detach(), ref[i], s["kl_estimator"]).sum())
    for i, loss in per_seq:
        if s["aggregation"] == "seq-mean-token-mean":
            total = total + loss.sum() / max(1, len(loss) if live[i] else 0) / n_seq
        elif s["aggregation"] == "token-mean":
            total = total + loss.sum() / max(1, n_tok)
        elif s["aggregation"] == "seq-mean-token-sum-norm":
            total = total + loss.sum() / (n_seq * s["max_completion_length"])
        else:
            raise ValueError(s["aggregation"])
    if s["dpo_coef"] != 0:
        # A completion masked out of the loss (truncated, mask_truncated_completions) is in no pair.
        total = total + s["dpo_coef"] * dpo_pair_loss(s["dpo_beta"], logp, ref, rewards, groups, [i for i in kept if live[i]])
    metrics = {
        "clip_ratio_low_mean": low / max(1, n_tok),
        "clip_ratio_high_mean": high / max(1, n_tok),
        "clip_ratio_region_mean": region / max(1, n_tok),
        "kl": kl_sum / max(1, n_tok),
    }
    return total, adv, metrics


def dpo_pair_loss(beta, logp, ref, rewards, groups, kept):
    """DGPO's pairwise term: per group, DPO between its best and worst completion (first on ties)."""
    losses = []
    for members in group_indices(groups).values():
        members = [i for i in members if i in kept]
        if len(members) < 2:
            continue
        best = max(members, key=lambda i: (rewards[i], -i))
        worst = min(members, key=lambda i: (rewards[i], i))
        if rewards[best] == rewards[worst]:
            continue
        margin = (logp[best].sum() - ref[best].sum()) - (logp[worst].sum() - ref[worst].sum())
        losses.append(-F.logsigmoid(beta * margin))
    if not losses:
        return 0
    return sum(losses) / len(losses)


def sft_loss(logp):
    """Cross-entropy on completion tokens: the mean of -log p over every completion token."""
    return -sum(lp.sum() for lp in logp) / sum(len(lp) for lp in logp)


def hf_schedule(kind, step, warmup, total):
    """transformers.get_{constant,linear,cosine}_schedule_with_warmup's lr multiplier at `step`."""
    if step < warmup:
        return step / max(1, warmup)
    if kind == "constant":
        return 1.0
    progress = (step - warmup) / max(1, total - warmup)
    if kind == "linear":
        return max(0.0, 1.0 - progress)
    if kind == "cosine":
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))
    raise ValueError(kind)
