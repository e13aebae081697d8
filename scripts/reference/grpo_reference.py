"""An independent plain-PyTorch reference of the GRPO-family losses.

Written from ../../../shared/reference/grpo-math.md (sections 2, 3, 4.1, 4.2, 5.1, 6, 7, 8, 9, 10.2,
10.6 and 11), not from the TypeScript learner. It works on ragged lists of 1-D tensors
(one per completion, no padding), where the learner works on padded [batch, C] tensors,
so that a shared indexing bug cannot hide.

Everything the loss needs is passed in explicitly: the current logprobs (with gradient),
the old, reference and sampler logprobs (constants), rewards, group ids, truncation flags.
"""

import itertools
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


def pass_at_k_centred(values, k):
    """Tang et al. (arXiv 2503.19595) leave-one-out max@k estimator, averaged over every k-subset
    of the group, by brute force: member i of subset S gets max(S) - max(S without i). For k = n
    this is verl's grpo_passk (r_max - r_second for the best, 0 for the others)."""
    n = len(values)
    if not 2 <= k <= n:
        raise ValueError(f"pass_k {k} does not fit a group of {n}")
    total = [0.0] * n
    subsets = list(itertools.combinations(range(n), k))
    for subset in subsets:
        best = max(values[j] for j in subset)
        for i in subset:
            total[i] += best - max(values[j] for j in subset if j != i)
    return [t / len(subsets) for t in total]


def advantages(rewards, groups, scale_rewards, eps=1e-4, estimator="grpo", pass_k=None):
    """grpo-math 2.2(a) / 15.2: r - group mean (or the pass@k advantage), divided by (group or batch Bessel std + eps) unless "none"."""
    by_group = group_indices(groups)
    batch_std = bessel_std(rewards)
    out = [0.0] * len(rewards)
    for members in by_group.values():
        values = [rewards[i] for i in members]
        mean = sum(values) / len(values)
        std = bessel_std(values)
        centred = pass_at_k_centred(values, pass_k or len(values)) if estimator == "passk" else [v - mean for v in values]
        for position, i in enumerate(members):
            a = centred[position]
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


def model_tokens(values, mask):
    """The entries of one completion that the model wrote: the loss mask (TrainingSample.completion_mask;
    verl's response_mask, TRL's tool mask) as selection, None (an empty mask) keeping every token."""
    if values is None or mask is None:
        return values
    return values[torch.as_tensor(mask, dtype=torch.bool)]


def policy_loss(s, logp, old, ref, sampler, rewards, groups, truncated, masks=None):
    """Loss of one batch and its metrics. s: dict of resolved settings (see make_algorithm_fixtures.py).

    masks: per completion, the loss mask (True: the model's token, False: the environment's) or None.
    The environment's tokens conditioned the forward pass that gave logp; here they are dropped before
    anything else, so ratios, KL, clipping, rollout weights, DPO sums and every length count see only
    the model's tokens."""
    if masks is not None:
        logp = [model_tokens(lp, m) for lp, m in zip(logp, masks)]
        old = [model_tokens(od, m) for od, m in zip(old, masks)]
        ref = None if ref is None else [model_tokens(r, m) for r, m in zip(ref, masks)]
        sampler = [model_tokens(sp, m) for sp, m in zip(sampler, masks)]
    adv = advantages(rewards, groups, s["scale_rewards"], estimator=s.get("advantage_estimator", "grpo"), pass_k=s.get("pass_k"))
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
        objective = s.get("objective", "clip")
        if objective == "cispo":
            # MiniMax-M1 (arXiv 2506.13585) eq. 4: the truncated IS weight is a constant on -A log pi.
            loss = -torch.clamp(ratio, max=s["epsilon_max"]).detach() * a * lp
        elif objective == "sapo":
            # SAPO (arXiv 2511.20347): soft gate sigma(tau (r - 1)) * 4 / tau replaces the clip.
            tau = s["sapo_temperature_pos"] if a > 0 else s["sapo_temperature_neg"]
            loss = -torch.sigmoid(tau * (ratio - 1)) * 4 / tau * a
        else:
            p1 = torch.minimum(ratio, torch.tensor(s["delta"])) if s["delta"] is not None else ratio
            p2 = torch.clamp(ratio, 1 - s["epsilon"], 1 + s["epsilon_high"])
            loss = -torch.minimum(p1 * a, p2 * a)
        if s["importance_sampling_cap"] is not None and sampler[i] is not None:
            loss = loss * rollout_weights(od, sampler[i], s)[0].float()
        if s["beta"] != 0:
            kl = kl_estimate(lp, ref[i], s["kl_estimator"])
            loss = loss + s["beta"] * kl
        if not live[i]:
            loss = loss * 0
        per_seq.append((i, loss))
        if live[i]:
            with torch.no_grad():
                r = ratio.detach()
                if objective == "cispo":  # truncated weights count as clipped high, whatever the advantage's sign
                    lo, hi = torch.zeros_like(r), (r > s["epsilon_max"]).float()
                elif objective == "sapo":  # a soft gate clips nothing
                    lo, hi = torch.zeros_like(r), torch.zeros_like(r)
                else:
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
        **rollout_corr_metrics(s, [old[i] for i in kept], [sampler[i] for i in kept]),
        "clip_ratio_low_mean": low / max(1, n_tok),
        "clip_ratio_high_mean": high / max(1, n_tok),
        "clip_ratio_region_mean": region / max(1, n_tok),
        "kl": kl_sum / max(1, n_tok),
    }
    return total, adv, metrics


def rollout_weights(old, sampler, s):
    """Rollout correction weights of one completion, per token (TRL GRPOTrainer's
    vllm_importance_sampling_mode, verl rollout_corr_helper.compute_rollout_correction_weights):
    rho = pi_old / pi_sampler per token, or one rho = prod_t rho_t for the whole sequence; then
    clamped into [min, cap] (truncate) or set to 0 outside it (mask). Log ratios bounded at +-20."""
    log_rho = old.double() - sampler.double()
    if s["importance_sampling_level"] == "sequence":
        rho = torch.exp(torch.clamp(log_rho.sum(), -20, 20)) * torch.ones_like(log_rho)
    else:
        rho = torch.exp(torch.clamp(log_rho, -20, 20))
    cap, low = s["importance_sampling_cap"], s["importance_sampling_min"]
    if s["importance_sampling_action"] == "truncate":
        return torch.clamp(rho, min=0.0 if low is None else low, max=cap), rho
    inside = rho <= cap
    if low is not None:
        inside = inside & (rho >= low)
    return torch.where(inside, rho, torch.zeros_like(rho)), rho


def rollout_corr_metrics(s, old, sampler):
    """verl's rollout_corr/* diagnostics (rollout_corr_helper.compute_offpolicy_metrics and
    compute_is_metrics), "/" written "_", over every token of the completions whose sampler
    logprobs are known; old and sampler are lists of 1-D tensors. Float64 throughout."""
    pairs = [(o.double(), sp.double()) for o, sp in zip(old, sampler) if sp is not None and len(o) > 0]
    if not pairs:
        return {}
    all_old = torch.cat([o for o, _ in pairs])
    all_sampler = torch.cat([sp for _, sp in pairs])
    log_rho = all_old - all_sampler
    seq_log_rho = torch.stack([(o - sp).sum() for o, sp in pairs])
    out = {
        "rollout_corr_kl": float((all_sampler - all_old).mean()),
        "rollout_corr_k3_kl": float((torch.exp(log_rho) - log_rho - 1).mean()),
        "rollout_corr_chi2_token": float(torch.exp(2 * torch.clamp(log_rho, -20, 20)).mean() - 1),
        "rollout_corr_chi2_seq": float(torch.exp(2 * torch.clamp(seq_log_rho, -20, 20)).mean() - 1),
        # training ppl / rollout ppl per sequence, averaged over sequences
        "rollout_corr_ppl_ratio": float(torch.stack([torch.exp(sp.mean() - o.mean()) for o, sp in pairs]).mean()),
    }
    if s["importance_sampling_cap"] is None:
        w = torch.exp(torch.clamp(log_rho, -20, 20))
    else:
        applied = [rollout_weights(o, sp, s) for o, sp in pairs]
        w = torch.cat([a.double() for a, _ in applied])
        rho = torch.cat([r for _, r in applied])
        out["rollout_corr_rollout_is_ratio_fraction_high"] = float((rho > s["importance_sampling_cap"]).double().mean())
        low = s["importance_sampling_min"]
        out["rollout_corr_rollout_is_ratio_fraction_low"] = float((rho < low).double().mean()) if low is not None else 0.0
        masked = (w == 0).double().mean() if s["importance_sampling_action"] == "mask" else torch.tensor(0.0)
        out["rollout_corr_rollout_rs_masked_fraction"] = float(masked)
    # Effective sample size of the weights the loss applies, normalised to (0, 1]: 1 / E[(w / E[w])^2].
    out["rollout_corr_rollout_is_eff_sample_size"] = float(1 / ((w / w.mean()) ** 2).mean()) if float(w.abs().sum()) > 0 else 0.0
    return out


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


def sft_loss(logp, masks=None):
    """Cross-entropy on completion tokens: the mean of -log p over every completion token (the model's, with masks)."""
    if masks is not None:
        logp = [model_tokens(lp, m) for lp, m in zip(logp, masks)]
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
