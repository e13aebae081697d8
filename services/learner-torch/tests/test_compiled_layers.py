"""torch.compile: true runs the native model's decoder layers compiled (model/decoder_layer.py):
the same logprobs and LoRA gradients as the eager layers, float32 on CPU to 1e-5, for padded
rows (the explicit attention bias) and unpadded ones (SDPA's causal path), with and without
gradient checkpointing, for the policy (with its adapter) and the reference (without); and a
pass with LoRA dropout stays eager (its generators do not trace) with the eager pass's masks.
One learner step with torch.compile equals one without. Needs torch >= 2.0 and a C++ compiler
(inductor's CPU backend); skipped with the reason under Debian's torch 1.13."""
import pytest
import torch

from adapted_passes import adapter_for, scores_and_gradients
from conftest import LM_FIXTURES
from leangrpo_learner.completion_logprobs import completion_logprobs
from leangrpo_learner.model.causal_lm import CausalLM, ForwardOptions
from leangrpo_learner.model.linear_modules import LINEAR_MODULES
from leangrpo_learner.sampling import SamplingDistribution

pytestmark = pytest.mark.skipif(not hasattr(torch, "compile"), reason=f"torch {torch.__version__} has no torch.compile (torch >= 2.0 has)")

PADDED = [([3, 5, 7], [11, 2, 9, 4]), ([8], [1, 6]), ([2, 4, 6, 8, 10], [12, 3, 5])]
UNPADDED = [([3, 5, 7], [11, 2, 9, 4]), ([8, 1, 6], [1, 6, 2, 2])]


def passes(model: CausalLM, pairs, gradient_checkpointing: bool, dropout: float = 0.0):
    adapter = adapter_for(model, LINEAR_MODULES, dropout)
    adapter.zero_grad(set_to_none=True)
    options = ForwardOptions(adapter=adapter, dropout_seed=11 if dropout else None, gradient_checkpointing=gradient_checkpointing)
    scores = completion_logprobs(model, pairs, SamplingDistribution(), options)
    scores.logprobs.sum().backward()
    with torch.no_grad():
        reference = completion_logprobs(model, pairs, SamplingDistribution(), ForwardOptions()).logprobs
    return scores.logprobs.detach(), reference, {k: p.grad.clone() for k, p in adapter.named_tensors().items()}


@pytest.mark.parametrize("architecture", ["qwen2-tiny", "qwen3-tiny"])
@pytest.mark.parametrize("pairs", [PADDED, UNPADDED], ids=["padded", "unpadded"])
@pytest.mark.parametrize("gradient_checkpointing", [False, True], ids=["no-gc", "gc"])
def test_compiled_layers_equal_eager_layers(architecture, pairs, gradient_checkpointing):
    eager = CausalLM.load(LM_FIXTURES / architecture)
    compiled = CausalLM.load(LM_FIXTURES / architecture)
    compiled.compile_layers()
    want_logp, want_ref, want_grads = passes(eager, pairs, gradient_checkpointing)
    from torch._dynamo.utils import counters

    torch._dynamo.reset()  # compile afresh, so the counters see this case's graphs
    counters.clear()
    got_logp, got_ref, got_grads = passes(compiled, pairs, gradient_checkpointing)
    # The layers ran as compiled graphs, whole: no graph break sends part of a layer back to eager.
    assert counters["stats"]["unique_graphs"] >= 1 and not counters["graph_break"], (dict(counters["stats"]), dict(counters["graph_break"]))
    assert torch.allclose(got_logp, want_logp, rtol=1e-5, atol=1e-6), (got_logp - want_logp).abs().max()
    assert torch.allclose(got_ref, want_ref, rtol=1e-5, atol=1e-6), (got_ref - want_ref).abs().max()
    for key, grad in want_grads.items():
        assert float((got_grads[key] - grad).abs().max()) <= 1e-5 * float(grad.abs().max()), key


def test_a_pass_with_lora_dropout_runs_eagerly_with_the_same_masks():
    eager = CausalLM.load(LM_FIXTURES / "qwen2-tiny")
    compiled = CausalLM.load(LM_FIXTURES / "qwen2-tiny")
    compiled.compile_layers()
    calls = []
    compiled.compiled_layer = lambda *args: calls.append(1) or pytest.fail("the compiled layer ran a pass with LoRA dropout")
    want_logp, want_grads = scores_and_gradients(eager, adapter_for(eager, LINEAR_MODULES, 0.3), PADDED, 17)
    got_logp, got_grads = scores_and_gradients(compiled, adapter_for(compiled, LINEAR_MODULES, 0.3), PADDED, 17)
    assert not calls
    assert torch.equal(got_logp, want_logp)
    for key, grad in want_grads.items():
        assert torch.equal(got_grads[key], grad), key
