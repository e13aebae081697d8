"""Writes the masked GRPO-family fixtures of services/learner/test/fixtures/algorithms/ (masked.json and
masked-*-gradients.safetensors): make_algorithm_fixtures.py's cases on the masked multi-turn batch of
multi_turn_batch.py, off-policy, so that ratios leave 1, clip and get rolled-out-corrected on the
model's tokens only.

Old logprobs: the current ones shifted per token (rows 0 and 4 unshifted); at the environment's tokens
they are shifted by -3 (a ratio of e^3, far outside every clip range) so that a learner counting them
anywhere fails. Sampler logprobs: old plus noise on the model's tokens, ENVIRONMENT_SAMPLER_LOGPROB at
the environment's. Both learners' unit tests (services/learner/test/masked-algorithm-parity.spec.ts,
services/learner-torch/tests/test_masked_algorithm_parity.py) read them. Seeded.

    /usr/bin/python3 scripts/reference/make_masked_algorithm_fixtures.py
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grpo_reference as grpo  # noqa: E402
import make_algorithm_fixtures as algo  # noqa: E402
import reference_model as ref  # noqa: E402
import multi_turn_batch  # noqa: E402
from multi_turn_batch import ENVIRONMENT_SAMPLER_LOGPROB, NO_SAMPLER, SAMPLES, model_token_counts  # noqa: E402

ENVIRONMENT_OLD_SHIFT = -3.0


def main():
    cfg, weights, settings, lora = algo.load_model()
    generator = torch.Generator().manual_seed(2828)
    pairs, groups, masks, rewards, truncated = multi_turn_batch.columns()

    with torch.no_grad():
        current, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, lora), pairs, algo.TEMPERATURE)
        reference, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights), pairs, algo.TEMPERATURE)
    old, sampler = [], []
    for row, (lp, m) in enumerate(zip(current, masks)):
        model = torch.tensor(m) if m is not None else torch.ones(len(lp), dtype=torch.bool)
        shifted = lp + (0.3 * torch.randn(len(lp), generator=generator) if row not in (0, 4) else 0)
        old.append(torch.where(model, shifted, lp + ENVIRONMENT_OLD_SHIFT).float())
        noisy = (old[-1] + 0.2 * torch.randn(len(lp), generator=generator)).clamp(max=-1e-3)
        sampler.append(None if row == NO_SAMPLER else torch.where(model, noisy, torch.full_like(noisy, ENVIRONMENT_SAMPLER_LOGPROB)).float())
    model_old = [grpo.model_tokens(od, m) for od, m in zip(old, masks)]
    model_sampler = [grpo.model_tokens(sp, m) for sp, m in zip(sampler, masks)]

    cases = []
    for name, algorithm, config, overrides in algo.CASES:
        s = {**algo.DEFAULTS, **algo.ALGORITHM_DEFAULTS[algorithm], **overrides}
        params = {k: v.clone().requires_grad_(True) for k, v in lora.items()}
        logp, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, params), pairs, algo.TEMPERATURE)
        algo.check_margins(s, [grpo.model_tokens(lp, m) for lp, m in zip(logp, masks)], model_old)
        algo.check_rollout_decisions(name, s, model_old, model_sampler)
        loss, adv, metrics = grpo.policy_loss(s, logp, old, reference, sampler, rewards, groups, truncated, masks)
        loss.backward()
        file = f"masked-{name}-gradients.safetensors"
        algo.write_case_gradients(name, file, params)
        cases.append(algo.rl_case(name, algorithm, config, adv, loss, metrics, file))

    cases.append(algo.sft_case(cfg, weights, settings, lora, pairs, "masked-sft-gradients.safetensors", masks))
    counts = model_token_counts()
    fixture = {
        "model": algo.MODEL,
        "adapter": algo.MODEL + "-lora",
        "temperature": algo.TEMPERATURE,
        "samples": [
            {
                "group_id": g,
                "prompt": p,
                "completion": c,
                "mask": m,
                "reward": r,
                "truncated": t,
                "old": algo.floats(od),
                "sampler": None if sp is None else algo.floats(sp),
            }
            for (g, p, c, m, r, t), od, sp in zip(SAMPLES, old, sampler)
        ],
        "zero_std_groups": grpo.zero_std_groups(rewards, groups),
        "completion_length": {"mean": sum(counts) / len(counts), "min": min(counts), "max": max(counts)},
        "cases": cases,
    }
    with open(os.path.join(algo.OUT, "masked.json"), "w") as f:
        json.dump(fixture, f, indent=1)


if __name__ == "__main__":
    main()
