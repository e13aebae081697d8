"""Writes the masked multi-turn fixtures of the LearnerService conformance suite
(tests/conformance/learner/fixtures/masked-conformance.json and masked-*-adapter.safetensors).

The batch is scripts/reference/multi_turn_batch.py: trajectories of prompt, model turn, the
environment's feedback, model turn, whose TrainingSample.completion_mask says which completion
tokens are the model's (trained) and which the environment's (conditioning only).

Computed by the independent reference of scripts/reference (reference_model.py, grpo_reference.py):
the forward pass runs over every completion token (the environment's condition what follows), then
grpo_reference.policy_loss drops the environment's tokens before anything else. For every algorithm
case of make_algorithm_fixtures.CASES and for SFT: the loss, its metrics, the pre-clipping gradient
norm and the adapter after one torch.optim.AdamW step, as make_conformance_fixtures.py does for the
unmasked batch. The script refuses a fixture that could not tell a learner that ignores the mask
from one that honours it.

    /usr/bin/python3 tests/conformance/learner/reference/make_masked_conformance_fixtures.py
"""

import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_conformance_fixtures as conformance  # noqa: E402  (OPTIMIZER, adamw_step, and the reference on its path)
from make_conformance_fixtures import algo, grpo, ref, safetensors_io  # noqa: E402

import multi_turn_batch  # noqa: E402  (scripts/reference)
from multi_turn_batch import ENVIRONMENT_SAMPLER_LOGPROB, NO_SAMPLER, SAMPLES  # noqa: E402

OUT = conformance.OUT


def main():
    cfg, weights, settings, lora = algo.load_model()
    generator = torch.Generator().manual_seed(28)
    pairs, groups, masks, rewards, truncated = multi_turn_batch.columns()
    temperature = algo.TEMPERATURE
    model_tokens = multi_turn_batch.model_token_counts()

    with torch.no_grad():
        policy, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, lora), pairs, temperature)
        reference, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights), pairs, temperature)
    sampler = []
    for i, (lp, m) in enumerate(zip(policy, masks)):
        if i == NO_SAMPLER:
            sampler.append(None)
            continue
        noisy = (lp + 0.2 * torch.randn(len(lp), generator=generator)).clamp(max=-1e-3)
        if m is not None:
            noisy = torch.where(torch.tensor(m), noisy, torch.full_like(noisy, ENVIRONMENT_SAMPLER_LOGPROB))
        sampler.append(noisy.float())

    cases = []
    for name, algorithm, config, overrides in algo.CASES:
        s = {**algo.DEFAULTS, **algo.ALGORITHM_DEFAULTS[algorithm], **overrides}
        params = {k: v.clone().requires_grad_(True) for k, v in lora.items()}
        logp, entropies = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, params), pairs, temperature)
        old = [lp.detach() for lp in logp]
        check_rollout_decisions(name, s, old, sampler, masks)
        loss, _, metrics = grpo.policy_loss(s, logp, old, reference, sampler, rewards, groups, truncated, masks)
        loss.backward()
        grads = {k: p.grad for k, p in params.items()}
        # A learner that trained on the environment's tokens must fail the case.
        ignoring = {k: v.clone().requires_grad_(True) for k, v in lora.items()}
        logp_all, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, ignoring), pairs, temperature)
        grpo.policy_loss(s, logp_all, old, reference, sampler, rewards, groups, truncated)[0].backward()
        assert_mask_matters(name, grads, {k: p.grad for k, p in ignoring.items()})
        adapter, norm = conformance.adamw_step(lora, grads)
        assert norm > conformance.OPTIMIZER["max_grad_norm"], f"{name}: clipping must be active to be tested (norm {norm})"
        zero = set(grpo.zero_std_groups(rewards, groups))
        kept = [i for i in range(len(SAMPLES)) if not (s["dynamic_sampling"] and groups[i] in zero)]
        expected = {
            "loss": float(loss),
            "grad_norm": norm,
            "entropy": sum(float(grpo.model_tokens(entropies[i], masks[i]).sum()) for i in kept) / sum(model_tokens[i] for i in kept),
            "clip_ratio_low_mean": metrics["clip_ratio_low_mean"],
            "clip_ratio_high_mean": metrics["clip_ratio_high_mean"],
            "clip_ratio_region_mean": metrics["clip_ratio_region_mean"],
        }
        if s["beta"] != 0 or s["dpo_coef"] != 0:
            expected["kl"] = metrics["kl"]
        expected.update({k: v for k, v in metrics.items() if k.startswith("rollout_corr_")})
        file = f"masked-{name}-adapter.safetensors"
        safetensors_io.write(os.path.join(OUT, file), adapter)
        cases.append(
            {"name": name, "algorithm": algorithm, "mode": "rl", "config": {"temperature": temperature, **config}, "metrics": expected, "adapter": file}
        )

    params = {k: v.clone().requires_grad_(True) for k, v in lora.items()}
    logp, entropies = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, params), pairs, 1.0)
    loss = grpo.sft_loss(logp, masks)
    assert abs(float(loss) - float(grpo.sft_loss([lp.detach() for lp in logp]))) > 1e-3, "sft: the mask does not change the loss"
    loss.backward()
    adapter, norm = conformance.adamw_step(lora, {k: p.grad for k, p in params.items()})
    safetensors_io.write(os.path.join(OUT, "masked-sft-adapter.safetensors"), adapter)
    entropy = sum(float(grpo.model_tokens(e, m).sum()) for e, m in zip(entropies, masks)) / sum(model_tokens)
    cases.append(
        {
            "name": "sft",
            "algorithm": "grpo",
            "mode": "sft",
            "config": {"temperature": 1.0},
            "metrics": {"loss": float(loss), "grad_norm": norm, "entropy": entropy},
            "adapter": "masked-sft-adapter.safetensors",
        }
    )

    rewards_mean = sum(rewards) / len(rewards)
    fixture = {
        "model": algo.MODEL,
        "temperature": temperature,
        "samples": [
            {
                "group_id": g,
                "prompt": p,
                "completion": c,
                "mask": m if m is not None else [],
                "reward": r,
                "truncated": t,
                "sampler": [] if sp is None else [float(x) for x in sp],
            }
            for (g, p, c, m, r, t), sp in zip(SAMPLES, sampler)
        ],
        "batch": {
            "reward_mean": rewards_mean,
            "reward_std": math.sqrt(sum((r - rewards_mean) ** 2 for r in rewards) / (len(rewards) - 1)),
            # Lengths count the model's tokens (the ones trained on), as both learners report them.
            "completion_length_mean": sum(model_tokens) / len(model_tokens),
            "completion_length_min": min(model_tokens),
            "completion_length_max": max(model_tokens),
            "zero_std_groups": grpo.zero_std_groups(rewards, groups),
        },
        "cases": cases,
    }
    with open(os.path.join(OUT, "masked-conformance.json"), "w") as f:
        json.dump(fixture, f, indent=1)


def assert_mask_matters(name, grads, ignoring):
    """The gradient with the mask must differ from the gradient on every completion token by more than float32 noise."""
    difference = math.sqrt(sum(float((grads[k] - ignoring[k]).pow(2).sum()) for k in grads))
    norm = math.sqrt(sum(float(g.pow(2).sum()) for g in grads.values()))
    assert difference > 1e-2 * norm, f"{name}: the mask moves the gradient by only {difference} (norm {norm})"


def check_rollout_decisions(name, s, old, sampler, masks):
    """As make_algorithm_fixtures.check_rollout_decisions on the model's tokens; a rollout case must hit a bound and miss one."""
    if s["importance_sampling_cap"] is None:
        return
    old_model = [grpo.model_tokens(od, m) for od, m in zip(old, masks)]
    sampler_model = [grpo.model_tokens(sp, m) for sp, m in zip(sampler, masks)]
    algo.check_rollout_decisions(name, s, old_model, sampler_model)
    bounds = [s["importance_sampling_cap"], s["importance_sampling_min"] or 0.0]
    rho = torch.cat([grpo.rollout_weights(od, sp, s)[1] for od, sp in zip(old_model, sampler_model) if sp is not None])
    outside = int(((rho > bounds[0]) | (rho < bounds[1])).sum())
    if name.startswith(("grpo-rollout", "dapo-rollout")):
        assert 0 < outside < len(rho), f"{name}: {outside} of {len(rho)} weights out of bounds: the case cannot test a decision"


if __name__ == "__main__":
    main()
