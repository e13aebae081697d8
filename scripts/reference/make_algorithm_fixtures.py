"""Writes the GRPO-family fixtures of services/learner/test/fixtures/algorithms/.

For a fixed batch of rollout samples on the qwen2-tiny fixture model with its LoRA
adapter, and for each algorithm case: the advantages, the loss, its metrics and the
gradient of the loss with respect to every LoRA tensor (PEFT names), computed by
grpo_reference.py on reference_model.py. Also: two AdamW steps with global-norm
clipping (torch.optim.AdamW, torch.nn.utils.clip_grad_norm_) and the learning-rate
schedules. Seeded; writes the same files on every run.

    /usr/bin/python3 scripts/reference/make_algorithm_fixtures.py
"""

import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grpo_reference as grpo  # noqa: E402
import reference_model as ref  # noqa: E402
import safetensors_io  # noqa: E402

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# The model and adapter come from the model library's fixtures; the outputs are the learner's.
ROOT = os.path.join(REPO, "packages", "lm", "test", "fixtures")
OUT = os.path.join(REPO, "services", "learner", "test", "fixtures", "algorithms")
MODEL = "qwen2-tiny"
TEMPERATURE = 0.7

# Three groups: two with a reward spread, one without (DAPO drops it). Lengths differ, two are truncated.
SAMPLES = [
    ("g0", [5, 17, 33], [40, 41, 7, 90, 12], 1.0, False),
    ("g0", [5, 17, 33], [8, 9], 0.0, False),
    ("g0", [5, 17, 33], [71, 72, 73, 74, 75, 76, 77], 0.0, True),
    ("g0", [5, 17, 33], [44, 3], 1.0, False),
    ("g1", [60, 61, 62, 63], [1, 95, 0], 0.5, False),
    ("g1", [60, 61, 62, 63], [20, 21, 22, 23], 0.25, True),
    ("g1", [60, 61, 62, 63], [30], 0.0, False),
    ("g2", [3, 9], [50, 51, 52], 1.0, False),
    ("g2", [3, 9], [53, 54], 1.0, False),
]

DEFAULTS = {
    "scale_rewards": "group",
    "epsilon": 0.2,
    "epsilon_high": 0.2,
    "delta": None,
    "beta": 0.04,
    "kl_estimator": "k3",
    "aggregation": "seq-mean-token-mean",
    "level": "token",
    "mask_truncated_completions": False,
    "importance_sampling_cap": None,
    "importance_sampling_min": None,
    "importance_sampling_level": "sequence",
    "importance_sampling_action": "mask",
    "dynamic_sampling": False,
    "max_completion_length": 512,
    "dpo_coef": 0.0,
    "dpo_beta": 0.1,
}
ALGORITHM_DEFAULTS = {
    "grpo": {},
    "drgrpo": {"scale_rewards": "none", "aggregation": "seq-mean-token-sum-norm", "beta": 0.0},
    "dapo": {"epsilon_high": 0.28, "aggregation": "token-mean", "beta": 0.0, "dynamic_sampling": True},
    "gspo": {"level": "sequence", "epsilon": 3e-4, "epsilon_high": 4e-4, "beta": 0.0},
    "dgpo": {"dpo_coef": 0.5},
    "cispo": {"objective": "cispo", "epsilon_max": 5.0, "aggregation": "token-mean", "beta": 0.0},
    "sapo": {"objective": "sapo", "sapo_temperature_pos": 1.0, "sapo_temperature_neg": 1.05, "beta": 0.0},
}
# (case name, algorithm, algorithm_config sent to the learner, the same knobs in reference terms)
# ART's truncated_is (token level, truncated at 2): what an async run asks for.
TOKEN_TRUNCATE = {"importance_sampling_cap": 2.0, "importance_sampling_level": "token", "importance_sampling_action": "truncate"}
# Rollout correction cases: bounds chosen so that some weights fall out of them and some do not.
ROLLOUT_CASES = [
    ("grpo-rollout-sequence-mask", "grpo", {"importance_sampling_cap": 1.25}),
    ("grpo-rollout-token-mask-min", "grpo", {"importance_sampling_cap": 1.3, "importance_sampling_min": 0.8, "importance_sampling_level": "token"}),
    ("dapo-rollout-sequence-truncate-min", "dapo", {"importance_sampling_cap": 1.35, "importance_sampling_min": 0.9, "importance_sampling_action": "truncate"}),
]
CASES = [
    ("grpo", "grpo", TOKEN_TRUNCATE, TOKEN_TRUNCATE),
    (
        "grpo-batch-k2-delta",
        "grpo",
        {"scale_rewards": "batch", "kl_estimator": "mse", "delta": 1.5, "epsilon": 0.1, "mask_truncated_completions": True},
        {"scale_rewards": "batch", "kl_estimator": "k2", "delta": 1.5, "epsilon": 0.1, "epsilon_high": 0.1, "mask_truncated_completions": True},
    ),
    ("grpo-k1-none", "grpo", {"kl_estimator": "k1", "beta": 0.1, "scale_rewards": "none"}, {"kl_estimator": "k1", "beta": 0.1, "scale_rewards": "none"}),
    ("drgrpo", "drgrpo", {"max_completion_length": 16}, {"max_completion_length": 16}),
    ("dapo", "dapo", {}, {}),
    ("gspo", "gspo", {}, {}),
    ("dgpo", "dgpo", {"kl_estimator": "abs", "dpo_beta": 0.5}, {"kl_estimator": "abs", "dpo_beta": 0.5}),
    *[(name, algorithm, config, config) for name, algorithm, config in ROLLOUT_CASES],
    ("cispo", "cispo", {}, {}),
    ("cispo-epsilon-max-1.2", "cispo", {"epsilon_max": 1.2}, {"epsilon_max": 1.2}),
    ("sapo", "sapo", {}, {}),
    # pass@k: k = 2 below every group's size, and DAPO with k = the group size (verl's grpo_passk).
    ("grpo-passk-2", "grpo", {"advantage_estimator": "passk", "pass_k": 2}, {"advantage_estimator": "passk", "pass_k": 2}),
    ("dapo-passk-group", "dapo", {"advantage_estimator": "passk"}, {"advantage_estimator": "passk"}),
    ("sapo-temperatures-2-4", "sapo", {"sapo_temperature_pos": 2.0, "sapo_temperature_neg": 4.0}, {"sapo_temperature_pos": 2.0, "sapo_temperature_neg": 4.0}),
]

# The sampling distribution (the contract's SamplingDistribution) in the learner's terms, and
# cases scored under it: every logprob (current, old, reference) is of logits / T restricted to
# top-k then top-p and renormalised, the sampled token always kept (reference_model.kept_support).
# Kept apart from CASES ("sampling_cases", "logprob_cases") so a learner's parity suite opts in.
SAMPLING = {"temperature": 0.7, "top_k": 20, "top_p": 0.9}
LOGPROB_CASES = [
    ("logprobs-t0.7-p0.9", True, {"temperature": 0.7, "top_k": 0, "top_p": 0.9}),
    ("logprobs-t1-k20", True, {"temperature": 1.0, "top_k": 20, "top_p": 1.0}),
    ("logprobs-reference-t0.7-k20-p0.9", False, SAMPLING),
]
# (case name, algorithm, algorithm_config, reference knobs, sampling, truncated flags or None for the batch's)
SAMPLING_CASES = [
    ("grpo-sampling-t0.7-k20-p0.9", "grpo", TOKEN_TRUNCATE, TOKEN_TRUNCATE, SAMPLING, None),
    ("gspo-sampling-importance-weight", "gspo", TOKEN_TRUNCATE, TOKEN_TRUNCATE, {"temperature": 0.7, "top_k": 0, "top_p": 0.9}, None),
    # The best of g0 and the worst of g1 are truncated: with mask_truncated_completions they leave the pairs too.
    (
        "dgpo-masked-truncated-pairs",
        "dgpo",
        {"mask_truncated_completions": True},
        {"mask_truncated_completions": True},
        {"temperature": 0.7, "top_k": 0, "top_p": 1.0},
        [True, False, True, False, False, True, True, False, False],
    ),
]


def load_model():
    with open(os.path.join(ROOT, MODEL, "config.json")) as f:
        cfg = ref.Config(json.load(f))
    weights = {k: v.float() for k, v in safetensors_io.read(os.path.join(ROOT, MODEL, "model.safetensors")).items()}
    with open(os.path.join(ROOT, MODEL + "-lora", "adapter_config.json")) as f:
        peft = json.load(f)
    settings = ref.LoraSettings(peft["r"], peft["lora_alpha"], peft["target_modules"], peft.get("use_rslora", False))
    lora = {k: v.float() for k, v in safetensors_io.read(os.path.join(ROOT, MODEL + "-lora", "adapter_model.safetensors")).items()}
    return cfg, weights, settings, lora


def floats(t):
    return [float(x) for x in t]


def check_margins(settings, logp, old):
    """No ratio may sit within 2e-5 of a clip bound, or float32 noise could flip a branch."""
    objective = settings.get("objective", "clip")
    if objective == "cispo":
        bounds = [settings["epsilon_max"]]
    elif objective == "sapo":
        bounds = []  # no bound: the gate is smooth
    else:
        bounds = [1 - settings["epsilon"], 1 + settings["epsilon_high"]] + ([settings["delta"]] if settings["delta"] else [])
    for lp, od in zip(logp, old):
        lr = (lp.detach() - od).double()
        ratios = [torch.exp(lr.mean())] if settings["level"] == "sequence" else torch.exp(lr)
        for r in ratios:
            for b in bounds:
                assert abs(float(r) - b) > 2e-5, f"ratio {float(r)} too close to the bound {b}"


def check_rollout_decisions(name, settings, old, sampler, kept=None):
    """Every rollout-correction weight must sit clearly inside or outside its bounds (log margin 1e-3,
    above the learners' float32 noise), and a masking or truncating case must hit a bound and miss one."""
    if settings["importance_sampling_cap"] is None:
        return
    bounds = [settings["importance_sampling_cap"]] + ([settings["importance_sampling_min"]] if settings["importance_sampling_min"] else [])
    outside = inside = 0
    for i, (od, sp) in enumerate(zip(old, sampler)):
        if sp is None or (kept is not None and i not in kept):
            continue
        _, rho = grpo.rollout_weights(od, sp, settings)
        for r in rho.tolist():
            for b in bounds:
                assert abs(math.log(r) - math.log(b)) > 1e-3, f"{name}: weight {r} too close to the bound {b}"
            out = r > bounds[0] or (len(bounds) > 1 and r < bounds[1])
            outside += out
            inside += not out
    if name.startswith(("grpo-rollout", "dapo-rollout")):
        assert outside > 0 and inside > 0, f"{name}: {outside} tokens out of bounds, {inside} in: the case cannot test a decision"


def write_case_gradients(name, file, params):
    """The case's LoRA gradients, refused when zero (a zero gradient tests nothing), written to OUT/file."""
    grads = {k: p.grad for k, p in params.items()}
    assert max(float(g.abs().max()) for g in grads.values()) > 1e-6, f"{name}: zero gradient cannot test anything"
    safetensors_io.write(os.path.join(OUT, file), grads)
    return grads


def rl_case(name, algorithm, config, adv, loss, metrics, file):
    """One RL case of a fixture's `cases` list, as both learners' parity tests read it."""
    return {
        "name": name,
        "algorithm": algorithm,
        "config": {"temperature": TEMPERATURE, **config},
        "mode": "rl",
        "advantages": adv,
        "loss": float(loss),
        "metrics": metrics,
        "gradients": file,
    }


def sft_case(cfg, weights, settings, lora, pairs, file, masks=None):
    """The SFT case (mean NLL of the completions' trained tokens) with its gradients written to OUT/file."""
    params = {k: v.clone().requires_grad_(True) for k, v in lora.items()}
    logp, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, params), pairs, 1.0)
    loss = grpo.sft_loss(logp, masks)
    loss.backward()
    safetensors_io.write(os.path.join(OUT, file), {k: p.grad for k, p in params.items()})
    return {
        "name": "sft",
        "algorithm": "grpo",
        "config": {"temperature": 1.0},
        "mode": "sft",
        "advantages": None,
        "loss": float(loss),
        "metrics": {},
        "gradients": file,
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    cfg, weights, settings, lora = load_model()
    generator = torch.Generator().manual_seed(6)
    pairs = [(p, c) for _, p, c, _, _ in SAMPLES]
    groups = [g for g, *_ in SAMPLES]
    rewards = [r for *_, r, _ in SAMPLES]
    truncated = [t for *_, t in SAMPLES]

    with torch.no_grad():
        current, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, lora), pairs, TEMPERATURE)
        reference, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights), pairs, TEMPERATURE)
    # Old policy: the current one, shifted per token on all rows but 0 and 4 so that ratios leave 1 and clip.
    old = [(lp + (0.3 * torch.randn(len(lp), generator=generator) if row not in (0, 4) else 0)).float() for row, lp in enumerate(current)]
    sampler = [(od + 0.2 * torch.randn(len(od), generator=generator)).float() for od in old]
    sampler[3] = None  # a sample whose sampler logprobs are unknown

    cases = []
    for name, algorithm, config, overrides in CASES:
        settings_case = {**DEFAULTS, **ALGORITHM_DEFAULTS[algorithm], **overrides}
        params = {k: v.clone().requires_grad_(True) for k, v in lora.items()}
        logp, entropies = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, params), pairs, TEMPERATURE)
        check_margins(settings_case, logp, old)
        check_rollout_decisions(name, settings_case, old, sampler)
        loss, adv, metrics = grpo.policy_loss(settings_case, logp, old, reference, sampler, rewards, groups, truncated)
        loss.backward()
        file = f"{name}-gradients.safetensors"
        grads = write_case_gradients(name, file, params)
        cases.append(rl_case(name, algorithm, config, adv, loss, metrics, file))
        if name == "grpo":
            adamw = adamw_steps(lora, grads)

    logprob_cases = []
    for name, use_adapter, sampling in LOGPROB_CASES:
        with torch.no_grad():
            model = ref.CausalLM(cfg, weights, settings, lora) if use_adapter else ref.CausalLM(cfg, weights)
            lps, ents = ref.completion_logprobs(model, pairs, sampling["temperature"], True, sampling["top_k"], sampling["top_p"])
        logprob_cases.append(
            {"name": name, "adapter": use_adapter, "sampling": sampling, "logprobs": [floats(x) for x in lps], "entropies": [floats(x) for x in ents]}
        )

    sampling_cases = []
    for name, algorithm, config, overrides, sampling, truncated_case in SAMPLING_CASES:
        settings_case = {**DEFAULTS, **ALGORITHM_DEFAULTS[algorithm], **overrides}
        t, k, p = sampling["temperature"], sampling["top_k"], sampling["top_p"]
        flags = truncated_case or truncated
        with torch.no_grad():
            cur, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, lora), pairs, t, True, k, p)
            reference_case, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights), pairs, t, True, k, p)
        noise = 0.3 if settings_case["level"] == "token" else 0.002
        old_case = [(lp + (noise * torch.randn(len(lp), generator=generator) if row not in (0, 4) else 0)).float() for row, lp in enumerate(cur)]
        sampler_case = [(od + 0.2 * torch.randn(len(od), generator=generator)).float() for od in old_case]
        sampler_case[3] = None
        params = {key: v.clone().requires_grad_(True) for key, v in lora.items()}
        logp, _ = ref.completion_logprobs(ref.CausalLM(cfg, weights, settings, params), pairs, t, True, k, p)
        check_margins(settings_case, logp, old_case)
        loss, adv, metrics = grpo.policy_loss(settings_case, logp, old_case, reference_case, sampler_case, rewards, groups, flags)
        loss.backward()
        file = f"{name}-gradients.safetensors"
        write_case_gradients(name, file, params)
        sampling_cases.append(
            {
                "name": name,
                "algorithm": algorithm,
                "config": config,
                "sampling": sampling,
                "mode": "rl",
                "truncated": flags,
                "old": [floats(x) for x in old_case],
                "sampler": [None if x is None else floats(x) for x in sampler_case],
                "advantages": adv,
                "loss": float(loss),
                "metrics": metrics,
                "gradients": file,
            }
        )

    cases.append(sft_case(cfg, weights, settings, lora, pairs, "sft-gradients.safetensors"))

    schedules = {kind: [grpo.hf_schedule(kind, step, 3, 10) for step in range(12)] for kind in ("constant", "linear", "cosine")}
    fixture = {
        "model": MODEL,
        "adapter": MODEL + "-lora",
        "temperature": TEMPERATURE,
        "samples": [
            {"group_id": g, "prompt": p, "completion": c, "reward": r, "truncated": t, "old": floats(od), "sampler": None if sp is None else floats(sp)}
            for (g, p, c, r, t), od, sp in zip(SAMPLES, old, sampler)
        ],
        "zero_std_groups": grpo.zero_std_groups(rewards, groups),
        "cases": cases,
        # Scored under a sampling distribution (TrainStepHeader.sampling / ComputeLogprobsRequest.sampling):
        # each case carries its own sampling, old and sampler logprobs and truncation flags.
        "sampling_cases": sampling_cases,
        "logprob_cases": logprob_cases,
        "adamw": adamw,
        "schedules": {"warmup": 3, "total": 10, "multipliers": schedules},
    }
    with open(os.path.join(OUT, "algorithms.json"), "w") as f:
        json.dump(fixture, f, indent=1)


def adamw_steps(lora, grads):
    """Two torch.optim.AdamW steps on the same gradients, each after clip_grad_norm_."""
    settings = {"lr": 1e-2, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.1, "max_grad_norm": 0.01}
    params = {k: torch.nn.Parameter(v.clone()) for k, v in lora.items()}
    optimizer = torch.optim.AdamW(params.values(), lr=settings["lr"], betas=settings["betas"], eps=settings["eps"], weight_decay=settings["weight_decay"])
    norms = []
    for _ in range(2):
        for k, p in params.items():
            p.grad = grads[k].clone()
        norms.append(float(torch.nn.utils.clip_grad_norm_(list(params.values()), settings["max_grad_norm"])))
        optimizer.step()
    assert norms[0] > settings["max_grad_norm"], "clipping must be active to be tested"
    safetensors_io.write(os.path.join(OUT, "adamw-weights.safetensors"), {k: p.detach() for k, p in params.items()})
    return {
        **settings,
        "betas": list(settings["betas"]),
        "steps": 2,
        "grad_norms": norms,
        "gradients": "grpo-gradients.safetensors",
        "weights": "adamw-weights.safetensors",
    }


if __name__ == "__main__":
    main()
