"""Packed projections (q/k/v and gate/up as one matmul each, model/packed_projections.py) compute
what separate linears compute: logprobs and LoRA gradients of the same model loaded packed and
unpacked agree to float32 rounding, for every fixture architecture (Qwen2 with q/k/v biases,
Qwen3 with q/k norms, Llama), with every module targeted, with a subset, and with LoRA dropout
(where each module's mask keeps the down projections apart). The packed model holds no second
copy of the weights: each module's weight is a view into its group's matrix."""
import pytest
import torch

from adapted_passes import adapter_for, scores_and_gradients
from conftest import LM_FIXTURES
from leangrpo_learner.completion_logprobs import completion_logprobs
from leangrpo_learner.model.causal_lm import CausalLM, ForwardOptions
from leangrpo_learner.model.linear_modules import LINEAR_MODULES, linear_name
from leangrpo_learner.sampling import SamplingDistribution

PAIRS = [([3, 5, 7], [11, 2, 9, 4]), ([8], [1, 6]), ([2, 4, 6, 8, 10], [12, 3, 5])]


@pytest.mark.parametrize("architecture", ["qwen2-tiny", "qwen3-tiny", "llama-tiny"])
@pytest.mark.parametrize(
    "modules, dropout",
    [(LINEAR_MODULES, 0.0), (("q_proj", "v_proj", "up_proj"), 0.0), (LINEAR_MODULES, 0.3)],
    ids=["all-modules", "subset", "dropout"],
)
def test_packed_model_equals_separate_linears(architecture, modules, dropout):
    packed = CausalLM.load(LM_FIXTURES / architecture)
    separate = CausalLM.load(LM_FIXTURES / architecture, pack=False)
    assert packed.packed and not separate.packed
    adapter_packed = adapter_for(packed, modules, dropout)
    adapter_separate = adapter_for(separate, modules, dropout)
    seed = 17 if dropout else None
    logp_packed, grads_packed = scores_and_gradients(packed, adapter_packed, PAIRS, seed)
    logp_separate, grads_separate = scores_and_gradients(separate, adapter_separate, PAIRS, seed)
    assert torch.allclose(logp_packed, logp_separate, rtol=1e-5, atol=1e-6), (logp_packed - logp_separate).abs().max()
    for key, grad in grads_separate.items():
        scale = float(grad.abs().max())
        assert scale > 0, key  # every targeted pair takes part
        assert float((grads_packed[key] - grad).abs().max()) <= 1e-5 * scale, key
    # The reference policy (no adapter) too.
    with torch.no_grad():
        plain_packed = completion_logprobs(packed, PAIRS, SamplingDistribution(), ForwardOptions()).logprobs
        plain_separate = completion_logprobs(separate, PAIRS, SamplingDistribution(), ForwardOptions()).logprobs
    assert torch.allclose(plain_packed, plain_separate, rtol=1e-5, atol=1e-6)


def test_packed_weights_are_views_of_one_matrix():
    model = CausalLM.load(LM_FIXTURES / "qwen2-tiny")
    group = model.packed[(0, ("q_proj", "k_proj", "v_proj"))]
    (matrix,), (bias,) = group.weights, group.biases
    offset = 0
    for module, size in zip(group.modules, group.sizes):
        weight = model.weights[f"{linear_name(0, module)}.weight"]
        assert weight.data_ptr() == matrix.data_ptr() + offset * matrix.stride(0) * matrix.element_size()
        assert torch.equal(weight, matrix[offset : offset + size])
        offset += size
    assert offset == matrix.shape[0]
    assert bias is not None  # Qwen2's q/k/v biases are packed with their weights
