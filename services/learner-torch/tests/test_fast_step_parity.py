"""The fast step (no old-policy pass on one on-policy update, the reference scored inside each
micro-batch, entropies without gradient, logsumexp instead of a full log-softmax, device-sized
chunks and budgets) computes what the former step did (torch.former_step: true): the same loss,
metrics, gradient norm and updated LoRA weights, step after step, for every algorithm case of the
independent reference's fixture (variable lengths, so padded rows; sampler logprobs, so the
rollout correction; DGPO's pair term; SFT). float32 on CPU: 1e-5 relative.

AdamW's epsilon is 1e-4 here rather than 1e-8: where a gradient entry is near epsilon, Adam's
g / (|g| + eps) turns float32 rounding (1e-7 relative, from summing in another order) into a
visibly different update; a larger epsilon keeps the comparison about what the step computes.
Updated weights agree to 1e-5 of their largest entry plus 1e-3 of the learning rate (what an
entry's tiny gradient moves through Adam's normalisation); the clipped gradients themselves (each
parameter's .grad after the step) to 1e-5 of their largest entry. From the second step on, each
side starts from the weights it updated (equal to that margin), so 1e-4 relative there; the
rollout correction's chi² metrics exponentiate sums of log-ratios and get 1e-4 throughout."""
import json
import math

import pytest
import torch

from conftest import ALGORITHM_FIXTURES, LM_FIXTURES
from leangrpo_learner.config import ConfigError, load_config
from leangrpo_learner.model.causal_lm import CausalLM
from leangrpo_learner.rpc.learner_host import learner_options
from leangrpo_learner.training.learner import Learner, StepRequest
from leangrpo_learner.training.training_example import TrainingExample

FIXTURE = json.loads((ALGORITHM_FIXTURES / "algorithms.json").read_text())
MODEL = CausalLM.load(LM_FIXTURES / FIXTURE["model"])
CASES = {c["name"]: c for c in FIXTURE["cases"]}
LEARNING_RATE = 0.02


def learner(former: bool, micro_batch_tokens: int, dropout: float = 0.0, compile_: bool = False) -> Learner:
    config = load_config(
        {
            "lora": {
                "rank": 4,
                "alpha": 8,
                "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
                "dropout": dropout,
            },
            "optimizer": {"learning_rate": LEARNING_RATE, "epsilon": 1e-4},
            "micro_batch_tokens": micro_batch_tokens,
            "seed": 7,
            "torch": {"former_step": former, "device": "cpu", "compile": compile_},
        }
    )
    # torch.compile compiles the model's layers: a model of its own, so the other tests' stays eager.
    made = Learner(CausalLM.load(LM_FIXTURES / FIXTURE["model"]) if compile_ else MODEL, learner_options(config))
    # Both sides start from the same adapter with B ≠ 0: with a fresh one (B = 0) the policy equals
    # the reference, where DGPO's "abs" KL estimator has the gradient sign(logp − ref) = sign(0 ± rounding),
    # which two passes cut into other micro-batches need not share.
    generator = torch.Generator().manual_seed(23)
    with torch.no_grad():
        for key, p in made.adapter.named_tensors().items():
            if key.endswith("lora_B.weight"):
                p.copy_(torch.randn(p.shape, generator=generator) * 0.05)
    return made


def request(case: dict, shift: int) -> StepRequest:
    examples = [
        TrainingExample(
            f"s{i}", s["group_id"], s["prompt"], s["completion"], s["sampler"], s["reward"] if not shift else s["reward"] * 0.5 + (i % 2), s["truncated"]
        )
        for i, s in enumerate(FIXTURE["samples"])
    ]
    return StepRequest(case["algorithm"], dict(case["config"]), case["mode"], examples)


def close(a: float, b: float, rel: float = 1e-5, abs_: float = 1e-6) -> bool:
    return math.isfinite(a) and abs(a - b) <= rel * abs(b) + abs_


def assert_same_steps(case: dict, fast: Learner, former: Learner, steps: int = 2):
    for step in range(steps):
        rel = 1e-5 if step == 0 else 1e-4
        got = fast.train_step(request(case, step))
        want = former.train_step(request(case, step))
        assert set(got.metrics) == set(want.metrics)
        for key, value in want.metrics.items():
            if key in ("tokens_per_second", "micro_batches"):
                continue
            assert close(got.metrics[key], value, 1e-4 if "chi2" in key else rel), (step, key, got.metrics[key], value)
        grads_fast = {k: p.grad for k, p in fast.adapter.named_tensors().items()}
        for key, p in former.adapter.named_tensors().items():
            scale = float(p.grad.abs().max())
            assert float((grads_fast[key] - p.grad).abs().max()) <= rel * scale + 1e-9, (step, key, "gradient")
        for key, tensor in former.adapter.peft_tensors().items():
            mine = fast.adapter.peft_tensors()[key]
            scale = float(tensor.abs().max())
            assert float((mine - tensor).abs().max()) <= rel * scale + 1e-3 * LEARNING_RATE, (step, key)
        moments_fast, moments_former = fast.optimizer.moments(), former.optimizer.moments()
        for key, (m, v) in moments_former.items():
            assert float((moments_fast[key][0] - m).abs().max()) <= rel * float(m.abs().max()) + 1e-9, key
            # v accumulates g²: a gradient that agrees to rel agrees in g² to 2·rel.
            assert float((moments_fast[key][1] - v).abs().max()) <= 2 * rel * float(v.abs().max()) + 1e-12, key


@pytest.mark.parametrize("name", list(CASES))
def test_fast_step_equals_the_former_step(name):
    """Several micro-batches on the fast side (budget 24 tokens), one on the former side."""
    assert_same_steps(CASES[name], learner(former=False, micro_batch_tokens=24), learner(former=True, micro_batch_tokens=1 << 20))


def test_replayed_iterations_still_take_the_old_policy_pass_and_agree():
    case = {**CASES["grpo"], "config": {**CASES["grpo"]["config"], "num_iterations": 2}}
    fast, former = learner(False, 24), learner(True, 24)
    assert_same_steps(case, fast, former)
    assert fast.step == 2 and fast.optimizer.updates == 4


def test_the_fast_step_makes_no_old_policy_pass_on_one_on_policy_update(monkeypatch):
    """What makes it fast, observed: the former step scores twice (old, reference) before its
    gradient pass; the fast one never calls score() (the reference is scored in the micro-batch)."""
    calls = []
    fast, former = learner(False, 1 << 20), learner(True, 1 << 20)
    for who, instance in (("fast", fast), ("former", former)):
        original = instance.score
        monkeypatch.setattr(instance, "score", lambda *a, _o=original, _w=who, **k: calls.append(_w) or _o(*a, **k))
    fast.train_step(request(CASES["grpo"], 0))
    former.train_step(request(CASES["grpo"], 0))
    assert calls == ["former", "former"]


def test_step_speed_keys_are_checked_naming_the_key():
    with pytest.raises(ConfigError, match='"torch.micro_batch_tokens" is 0; accepted: "auto"'):
        load_config({"torch": {"micro_batch_tokens": 0}})
    with pytest.raises(ConfigError, match="\"torch.micro_batch_tokens\" is 'big'"):
        load_config({"torch": {"micro_batch_tokens": "big"}})
    with pytest.raises(ConfigError, match='"torch.logits_chunk_mib" is -1'):
        load_config({"torch": {"logits_chunk_mib": -1}})
    with pytest.raises(ConfigError, match='"torch.former_step" is 1; accepted: true or false'):
        load_config({"torch": {"former_step": 1}})
    assert load_config({"torch": {"micro_batch_tokens": 4096}})["torch"]["micro_batch_tokens"] == 4096
    assert load_config({"torch": {"micro_batch_tokens": None}})["torch"]["micro_batch_tokens"] is None
    assert load_config({})["torch"]["micro_batch_tokens"] == "auto"


def test_torch_compile_is_refused_naming_the_key_where_torch_has_none_and_computes_the_same_where_it_has():
    if not hasattr(torch, "compile"):
        with pytest.raises(ConfigError, match=f'"torch.compile" is true but torch {torch.__version__} has no torch.compile'):
            load_config({"torch": {"compile": True}})
        return
    # One micro-batch: each new shape is a compilation.
    compiled = learner(former=False, micro_batch_tokens=1 << 20, compile_=True)
    assert compiled.speed.compile and compiled.model.compiled_layer is not None
    assert_same_steps(CASES["dgpo"], compiled, learner(former=True, micro_batch_tokens=1 << 20), steps=2)
