"""Writes the fixtures of the LearnerService conformance suite (tests/conformance/learner/fixtures/).

What a learner must answer over gRPC, computed by the independent PyTorch reference of
scripts/reference/ (reference_model.py, grpo_reference.py, safetensors_io.py), which shares
no code with either learner. Starting point: the qwen2-tiny fixture model with its LoRA
adapter (packages/lm/test/fixtures) and the batch of services/learner/test/fixtures/algorithms.

Over gRPC a TrainStep is on-policy: the learner scores the batch under its current policy
before the update, so the "old" logprobs equal the current ones (ratio 1). The algorithm
fixtures of services/learner use shifted old logprobs to exercise clipping, which no RPC
can send; these fixtures are the RPC-visible counterpart. For each algorithm case:
the loss, its metrics, the pre-clipping gradient norm and the PEFT adapter after one
torch.optim.AdamW step (after clip_grad_norm_). Also the logprobs and entropies of the
batch under the policy and the reference, and a checkpoint a learner starts from.

    /usr/bin/python3 tests/conformance/learner/reference/make_conformance_fixtures.py
"""

import json
import math
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "scripts", "reference"))
import grpo_reference as grpo  # noqa: E402
import make_algorithm_fixtures as algo  # noqa: E402  (the batch, algorithm defaults and cases)
import reference_model as ref  # noqa: E402
import safetensors_io  # noqa: E402

OUT = os.path.join(HERE, "..", "fixtures")
ALGORITHMS = os.path.join(REPO, "services", "learner", "test", "fixtures", "algorithms", "algorithms.json")
# Optimizer of the learner under test. epsilon 1e-3 sits near the clipped gradients' typical
# size, so Adam's first update depends on each gradient's magnitude, not only on its sign.
OPTIMIZER = {"learning_rate": 1e-2, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-3, "weight_decay": 0.1, "max_grad_norm": 0.25}


def learner_layout_shape(key, shape):
    """Optimizer moments are stored in the learner's layout: A as [in, r], B as [r, out] (PEFT's transposed)."""
    return [shape[1], shape[0]]


def write_start_checkpoint(lora, base_model):
    """A checkpoint at step 0 holding the fixture adapter and zero AdamW moments (a fresh optimizer)."""
    directory = os.path.join(OUT, "start-checkpoint")
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(os.path.join(directory, "adapter"))
    source = os.path.join(algo.ROOT, algo.MODEL + "-lora")
    for name in ("adapter_config.json", "adapter_model.safetensors"):
        shutil.copyfile(os.path.join(source, name), os.path.join(directory, "adapter", name))
    moments = {}
    for key, tensor in lora.items():
        zeros = torch.zeros(learner_layout_shape(key, list(tensor.shape)), dtype=torch.float32)
        moments[f"{key}.exp_avg"] = zeros
        moments[f"{key}.exp_avg_sq"] = zeros.clone()
    safetensors_io.write(os.path.join(directory, "optimizer.safetensors"), moments, {"format": "pt"})
    state = {"format_version": 1, "step": 0, "adapter_version": 0, "algorithm": "", "optimizer_updates": 0, "seed": 0,
             "base_model": base_model}
    with open(os.path.join(directory, "trainer_state.json"), "w") as f:
        json.dump(state, f, indent=2)


def adamw_step(lora, grads):
    """One torch.optim.AdamW step after clip_grad_norm_; returns the new tensors and the pre-clip norm."""
    params = {k: torch.nn.Parameter(v.clone()) for k, v in lora.items()}
    optimizer = torch.optim.AdamW(params.values(), lr=OPTIMIZER["learning_rate"], betas=(OPTIMIZER["beta1"], OPTIMIZER["beta2"]),
                                  eps=OPTIMIZER["epsilon"], weight_decay=OPTIMIZER["weight_decay"])
    for k, p in params.items():
        p.grad = grads[k].clone()
    norm = float(torch.nn.utils.clip_grad_norm_(list(params.values()), OPTIMIZER["max_grad_norm"]))
    optimizer.step()
    return {k: p.detach().clone() for k, p in params.items()}, norm


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(ALGORITHMS) as f:
        batch = json.load(f)
    cfg, weights, settings, lora = algo.load_model()
    samples = batch["samples"]
    pairs = [(s["prompt"], s["completion"]) for s in samples]
    groups = [s["group_id"] for s in samples]
    rewards = [s["reward"] for s in samples]
    truncated = [s["truncated"] for s in samples]
    sampler = [None if s["sampler"] is None else torch.tensor(s["sampler"], dtype=torch.float32) for s in samples]
    temperature = batch["temperature"]

    with torch.no_grad():
        policy, policy_entropy = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, lora), pairs, temperature)
        reference, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights), pairs, temperature)
    moved = max(float((p - r).abs().max()) for p, r in zip(policy, reference))
    assert moved > 1e-2, f"the adapter moves the logprobs by only {moved}: policy and reference could not be told apart"

    cases = []
    for name, algorithm, config, overrides in algo.CASES:
        s = {**algo.DEFAULTS, **algo.ALGORITHM_DEFAULTS[algorithm], **overrides}
        params = {k: v.clone().requires_grad_(True) for k, v in lora.items()}
        logp, entropies = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, params), pairs, temperature)
        old = [lp.detach() for lp in logp]
        algo.check_rollout_decisions(name, s, old, sampler)
        loss, _, metrics = grpo.policy_loss(s, logp, old, reference, sampler, rewards, groups, truncated)
        loss.backward()
        grads = {k: p.grad for k, p in params.items()}
        adapter, norm = adamw_step(lora, grads)
        assert norm > OPTIMIZER["max_grad_norm"], f"{name}: clipping must be active to be tested (norm {norm})"
        zero = set(grpo.zero_std_groups(rewards, groups))
        kept = [i for i in range(len(samples)) if not (s["dynamic_sampling"] and groups[i] in zero)]
        tokens = sum(len(pairs[i][1]) for i in kept)
        expected = {
            "loss": float(loss),
            "grad_norm": norm,
            "entropy": sum(float(entropies[i].sum()) for i in kept) / tokens,
            "clip_ratio_low_mean": metrics["clip_ratio_low_mean"],
            "clip_ratio_high_mean": metrics["clip_ratio_high_mean"],
            "clip_ratio_region_mean": metrics["clip_ratio_region_mean"],
        }
        # The KL is reported only when the step needs the reference (a KL or a DPO term).
        if s["beta"] != 0 or s["dpo_coef"] != 0:
            expected["kl"] = metrics["kl"]
        # The rollout-correction diagnostics between the sampler's logprobs and the learner's (verl's rollout_corr/*).
        expected.update({k: v for k, v in metrics.items() if k.startswith("rollout_corr_")})
        file = f"{name}-adapter.safetensors"
        safetensors_io.write(os.path.join(OUT, file), adapter)
        cases.append({"name": name, "algorithm": algorithm, "mode": "rl", "config": {"temperature": temperature, **config},
                      "metrics": expected, "adapter": file})

    params = {k: v.clone().requires_grad_(True) for k, v in lora.items()}
    logp, entropies = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, params), pairs, 1.0)
    loss = grpo.sft_loss(logp)
    loss.backward()
    adapter, norm = adamw_step(lora, {k: p.grad for k, p in params.items()})
    tokens = sum(len(c) for _, c in pairs)
    safetensors_io.write(os.path.join(OUT, "sft-adapter.safetensors"), adapter)
    cases.append({"name": "sft", "algorithm": "grpo", "mode": "sft", "config": {"temperature": 1.0},
                  "metrics": {"loss": float(loss), "grad_norm": norm, "entropy": sum(float(e.sum()) for e in entropies) / tokens},
                  "adapter": "sft-adapter.safetensors"})

    rewards_mean = sum(rewards) / len(rewards)
    fixture = {
        "model": algo.MODEL,
        "adapter": algo.MODEL + "-lora",
        "temperature": temperature,
        "optimizer": OPTIMIZER,
        "batch": {
            "reward_mean": rewards_mean,
            "reward_std": math.sqrt(sum((r - rewards_mean) ** 2 for r in rewards) / (len(rewards) - 1)),
            "frac_reward_zero_std": sum(1 for g in groups if g in set(grpo.zero_std_groups(rewards, groups))) / len(groups),
            "completion_length_mean": sum(len(c) for _, c in pairs) / len(pairs),
            "zero_std_groups": grpo.zero_std_groups(rewards, groups),
        },
        "policy": {"logprobs": [[float(x) for x in lp] for lp in policy], "entropies": [[float(x) for x in e] for e in policy_entropy]},
        "reference": {"logprobs": [[float(x) for x in lp] for lp in reference]},
        "cases": cases,
    }
    write_start_checkpoint(lora, algo.MODEL)
    with open(os.path.join(OUT, "conformance.json"), "w") as f:
        json.dump(fixture, f, indent=1)


if __name__ == "__main__":
    main()
