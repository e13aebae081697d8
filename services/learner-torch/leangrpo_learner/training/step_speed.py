"""How a training step uses its device (torch.micro_batch_tokens, torch.logits_chunk_mib,
torch.former_step, torch.compile): the token budget of a micro-batch, the logits held per projection chunk, and
fused AdamW. None of these changes what a step computes, only how it is cut and launched.

On CPU the former values hold: the top-level micro_batch_tokens (8192) and 16 MiB logit chunks
(a CPU cache's worth). On a GPU "auto" sizes micro-batches from the memory left after the model
loaded (activation_bytes_per_token: an upper estimate of what autograd keeps per token) and
projects the vocabulary in chunks of 512 MiB of float32 logits: a 0.5B model's 8192-token
micro-batch in 16 MiB chunks launched ~300 projections, each a handful of small kernels."""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from ..completion_logprobs import LOGIT_FLOATS_PER_CHUNK

MIB = 1 << 20
GPU_LOGITS_CHUNK_MIB = 512
# Of the memory free after loading: what micro-batches may take (the rest: the allocator's
# fragmentation, the logit chunks' backward, cuBLAS/NCCL workspaces).
AUTO_MEMORY_FRACTION = 0.6
AUTO_MIN_TOKENS = 2048


@dataclass(frozen=True)
class StepSpeedSettings:
    """The config's torch.* keys as given (config.py checks them)."""

    micro_batch_tokens: int | str | None = "auto"  # None: the top-level micro_batch_tokens
    logits_chunk_mib: int = 0  # 0: 16 on CPU, 512 on CUDA
    former_step: bool = False
    compile: bool = False


@dataclass(frozen=True)
class StepSpeed:
    """What a step runs with, resolved for the device."""

    micro_batch_tokens: int
    logit_chunk_floats: int
    fused_adamw: bool
    former_step: bool
    compile: bool = False


@dataclass(frozen=True)
class DecoderDims:
    hidden: int
    intermediate: int
    layers: int
    kv_hidden: int  # num_kv_heads × head_dim


def decoder_dims(model) -> DecoderDims | None:
    """The native model's config, or the transformers model's text config; None when unknown."""
    config = model.config if hasattr(model.config, "hidden_size") else None
    if config is None and hasattr(model, "hf_model"):
        hf = model.hf_model.config
        config = hf.get_text_config() if hasattr(hf, "get_text_config") else hf
    if config is None:
        return None
    hidden = int(config.hidden_size)
    layers = int(getattr(config, "num_layers", None) or getattr(config, "num_hidden_layers"))
    heads = int(getattr(config, "num_heads", None) or getattr(config, "num_attention_heads"))
    kv_heads = int(getattr(config, "num_kv_heads", None) or getattr(config, "num_key_value_heads", None) or heads)
    head_dim = int(getattr(config, "head_dim", None) or hidden // heads)
    return DecoderDims(hidden, int(config.intermediate_size), layers, kv_heads * head_dim)


def activation_bytes_per_token(dims: DecoderDims, gradient_checkpointing: bool, element_bytes: int = 2) -> int:
    """What the forward of one token keeps for the backward, summed over layers (an upper estimate:
    each linear's input, q/k/v before and after RoPE and GQA's repeat, attention's output, the
    MLP's gate, up, SiLU and product; the float32 copies of the RMS norms). With checkpointing only
    each layer's input is kept, plus one layer's worth while it is recomputed."""
    h, i = dims.hidden, dims.intermediate
    per_layer = element_bytes * (12 * h + 4 * dims.kv_hidden + 4 * i) + 4 * 2 * h
    if gradient_checkpointing:
        return element_bytes * h * dims.layers + per_layer
    return per_layer * dims.layers


def resolve_step_speed(settings: StepSpeedSettings | None, model, configured_tokens: int, gradient_checkpointing: bool) -> StepSpeed:
    settings = settings or StepSpeedSettings(micro_batch_tokens=None)
    device = model.device
    cuda = device.type == "cuda"
    if settings.former_step:
        # The step as it was before: separate old and reference passes, CPU-sized chunks, the
        # top-level token budget, torch's default AdamW. For parity checks and benchmarks.
        settings = replace(settings, micro_batch_tokens=None, logits_chunk_mib=16)
    chunk_mib = settings.logits_chunk_mib or (GPU_LOGITS_CHUNK_MIB if cuda else LOGIT_FLOATS_PER_CHUNK * 4 // MIB)
    tokens = configured_tokens
    if isinstance(settings.micro_batch_tokens, int):
        tokens = settings.micro_batch_tokens
    elif settings.micro_batch_tokens == "auto" and cuda:
        tokens = auto_micro_batch_tokens(model, gradient_checkpointing, chunk_mib, configured_tokens)
    return StepSpeed(
        micro_batch_tokens=tokens,
        logit_chunk_floats=chunk_mib * MIB // 4,
        fused_adamw=cuda and not settings.former_step and _has_fused_adamw(),
        former_step=settings.former_step,
        compile=settings.compile and not settings.former_step,
    )


def auto_micro_batch_tokens(model, gradient_checkpointing: bool, chunk_mib: int, fallback: int) -> int:
    dims = decoder_dims(model)
    if dims is None:
        return fallback
    free, _ = torch.cuda.mem_get_info(model.device)
    # The logit chunk's backward holds ~4 float32-sized copies of it at once.
    usable = free * AUTO_MEMORY_FRACTION - 4 * chunk_mib * MIB
    tokens = int(usable // activation_bytes_per_token(dims, gradient_checkpointing))
    return max(AUTO_MIN_TOKENS, tokens)


def _has_fused_adamw() -> bool:
    import inspect

    return "fused" in inspect.signature(torch.optim.AdamW.__init__).parameters
