"""Every algorithm case on the masked multi-turn batch (TrainingSample.completion_mask), off-policy, against
the independent PyTorch reference (scripts/reference/make_masked_algorithm_fixtures.py), as the TS learner's
masked-algorithm-parity.spec.ts: advantages, loss, the step's metrics (clip ratios, KL, rollout correction,
lengths) and every LoRA gradient, counted on the model's tokens only."""
import json

import pytest

from conftest import ALGORITHM_FIXTURES, LM_FIXTURES
from leangrpo_learner import safetensors_io
from leangrpo_learner.algorithms.registry import algorithm_named
from leangrpo_learner.lora.peft_files import load_peft_adapter
from leangrpo_learner.model.causal_lm import CausalLM
from leangrpo_learner.sampling import SamplingDistribution
from leangrpo_learner.training.learner import Learner
from leangrpo_learner.training.prepared_batch import prepare_batch
from leangrpo_learner.training.step_gradients import StepGradientInputs, step_gradients
from leangrpo_learner.training.step_metrics import UpdateRecord, step_metrics
from leangrpo_learner.training.training_example import TrainingExample

FIXTURE = json.loads((ALGORITHM_FIXTURES / "masked.json").read_text())
MODEL = CausalLM.load(LM_FIXTURES / FIXTURE["model"])
EXAMPLES = [
    TrainingExample(f"m{i}", s["group_id"], s["prompt"], s["completion"], s["sampler"], s["reward"], s["truncated"], s["mask"])
    for i, s in enumerate(FIXTURE["samples"])
]


@pytest.mark.parametrize("name", [c["name"] for c in FIXTURE["cases"]])
def test_advantages_loss_metrics_and_every_lora_gradient_on_the_models_tokens(name):
    case = next(c for c in FIXTURE["cases"] if c["name"] == name)
    settings = algorithm_named(case["algorithm"]).resolve(case["config"])
    sampling = SamplingDistribution(settings.temperature)
    adapter = load_peft_adapter(LM_FIXTURES / FIXTURE["adapter"], MODEL.config)
    batch = prepare_batch(EXAMPLES, settings, case["mode"])
    pairs = [(r.example.prompt_ids, r.example.completion_ids) for r in batch.rows]
    needs_ref = case["mode"] == "rl" and (settings.beta != 0 or settings.dpo_coef != 0)
    scorer = Learner.__new__(Learner)  # only score(): the model and the token budget
    scorer.model, scorer.options = MODEL, type("O", (), {"micro_batch_tokens": 1 << 20})()
    ref = scorer.score(pairs, sampling, None)[0] if needs_ref else None
    old = [FIXTURE["samples"][r.index]["old"] for r in batch.rows] if case["mode"] == "rl" else None
    result = step_gradients(StepGradientInputs(MODEL, adapter, settings, sampling, batch, old, ref, 1 << 20))
    grads = {key: p.grad.detach().clone() for key, p in adapter.named_tensors().items()}

    if case["advantages"]:
        assert batch.advantages == pytest.approx(case["advantages"], abs=1e-12)
    # Some losses cancel to ~1e-3 from O(1) terms: float32 rounding is the floor there (1e-6 absolute).
    assert abs(result.loss - case["loss"]) < 1e-5 * abs(case["loss"]) + 1e-6, (result.loss, case["loss"])
    metrics = step_metrics(EXAMPLES, batch, [UpdateRecord(result, 0.0, 0.0)], old, 1.0, settings)
    lengths = FIXTURE["completion_length"]
    assert metrics["completion_length_mean"] == pytest.approx(lengths["mean"], abs=1e-12)
    assert (metrics["completion_length_min"], metrics["completion_length_max"]) == (lengths["min"], lengths["max"])
    if case["mode"] == "rl":
        for key in ("clip_ratio_low_mean", "clip_ratio_high_mean", "clip_ratio_region_mean"):
            assert metrics[key] == pytest.approx(case["metrics"][key], abs=1e-12), key
        if needs_ref:
            assert abs(metrics["kl"] - case["metrics"]["kl"]) / abs(case["metrics"]["kl"]) < 1e-5
        expected = {k: v for k, v in case["metrics"].items() if k.startswith("rollout_corr_")}
        assert expected
        for key, want in expected.items():
            assert metrics[key] == pytest.approx(want, rel=1e-6, abs=1e-6), key
    reference = safetensors_io.load_file(ALGORITHM_FIXTURES / case["gradients"])
    assert set(grads) == set(reference)
    for key, grad in grads.items():
        expected_grad = reference[key].float()
        scale = float(expected_grad.abs().max())
        assert scale > 0, f"{key} has a zero reference gradient"
        assert float((grad - expected_grad).abs().max()) / scale < 1e-5, key


def test_bad_masks_name_the_sample_the_field_and_the_lengths():
    from leangrpo_learner.errors import SampleError
    from leangrpo_learner.training.sample_validation import validate_examples

    longer = [*EXAMPLES]
    longer[4] = TrainingExample("m4", "g1", [60], [1, 95, 0], None, 0.5, False, [True, False])
    with pytest.raises(SampleError, match=r'^sample 4 \(sample_id "m4"\): completion_mask has 2 values but completion_token_ids has 3; .*or none'):
        validate_examples(longer, MODEL.config, 0, 0)
    environment_only = [*EXAMPLES]
    environment_only[1] = TrainingExample("m1", "g0", [5], [8, 9], None, 0.0, False, [False, False])
    with pytest.raises(SampleError, match=r"^sample 1 \(sample_id \"m1\"\): completion_mask has no true value among its 2; at least one"):
        validate_examples(environment_only, MODEL.config, 0, 0)
    validate_examples(EXAMPLES, MODEL.config, 0, 0)
