"""LoRA-adapted passes shared by the packed- and compiled-layer tests: an adapter with B ≠ 0 (a
fresh one's B is zero and would change nothing), and one pass's logprobs with every LoRA gradient."""
import torch

from leangrpo_learner.completion_logprobs import completion_logprobs
from leangrpo_learner.lora.lora_adapter import LoraAdapter
from leangrpo_learner.lora.lora_config import LoraConfig
from leangrpo_learner.model.causal_lm import CausalLM, ForwardOptions
from leangrpo_learner.sampling import SamplingDistribution


def adapter_for(model: CausalLM, modules: tuple[str, ...], dropout: float) -> LoraAdapter:
    config = LoraConfig(4, 8.0, modules, dropout)
    adapter = LoraAdapter.create(model.lora_layout(config), config, seed=3)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():  # B ≠ 0, or the adapter would change nothing
        for key, p in adapter.named_tensors().items():
            if key.endswith("lora_B.weight"):
                p.copy_(torch.randn(p.shape, generator=generator) * 0.1)
    return adapter


def scores_and_gradients(model: CausalLM, adapter: LoraAdapter, pairs, dropout_seed):
    adapter.zero_grad(set_to_none=True)
    scores = completion_logprobs(model, pairs, SamplingDistribution(), ForwardOptions(adapter=adapter, dropout_seed=dropout_seed))
    (scores.logprobs * torch.linspace(0.5, 1.5, scores.logprobs.numel()).view_as(scores.logprobs)).sum().backward()
    return scores.logprobs.detach(), {k: p.grad.clone() for k, p in adapter.named_tensors().items()}
