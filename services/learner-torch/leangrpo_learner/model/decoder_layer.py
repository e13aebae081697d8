"""One pre-norm decoder layer (Qwen2, Qwen3, Llama) as a function of tensors: the layer's frozen
weights and its LoRA pairs come in as arguments, not looked up by name, so torch.compile
(torch.compile: true) traces one graph that every layer reuses: RMS norms, RoPE, SiLU·up, the
residual adds and LoRA's scaling fused into a few kernels around the matmuls and attention.
The eager path runs the very same function.

LoRA dropout draws a mask per (pass seed, layer, module) from its own generator, so a
recomputation under gradient checkpointing draws the same one; generators do not trace, so a
pass with dropout runs eagerly (CausalLM decides)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional

import torch
import torch.nn.functional as F

from .rotary import apply_rotary

# torch >= 2.0 has a fused attention kernel; torch 1.13 (Debian) takes the plain path.
HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
# torch >= 2.5: SDPA reads grouped kv heads itself (no repeated copies of k and v).
SDPA_GQA = HAS_SDPA and tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 5)

Pair = tuple[torch.Tensor, torch.Tensor]  # LoRA A [r, in], B [out, r]
# (module name, its LoRA input) -> the input with the module's dropout mask applied
DropoutFn = Callable[[str, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class LayerShape:
    """The config's numbers a layer needs (constants to torch.compile)."""

    num_heads: int
    num_kv_heads: int
    head_dim: int
    eps: float
    qk_norm: bool


class Linears(NamedTuple):
    """Linears over one input: one packed matrix (packed_projections.py), or one per module."""

    modules: tuple[str, ...]
    weights: tuple[torch.Tensor, ...]  # one packed [Σ out, in], or one per module
    biases: tuple[Optional[torch.Tensor], ...]
    sizes: tuple[int, ...]  # each module's out_features


class LayerWeights(NamedTuple):
    input_norm: torch.Tensor
    post_norm: torch.Tensor
    qkv: Linears
    o: Linears
    gate_up: Linears
    down: Linears
    q_norm: Optional[torch.Tensor]
    k_norm: Optional[torch.Tensor]


class LayerLora(NamedTuple):
    """Each module's (A, B) or None, keyed by module name; scaling = alpha / r (or / √r)."""

    pairs: dict[str, Optional[Pair]]
    scaling: float


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    dtype = x.dtype
    x32 = x.to(torch.float32)
    x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return weight * x32.to(dtype)


def _cast(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    # LoRA weights are float32 parameters; over bf16 activations they multiply in bf16 (as autocast would).
    return w.to(x.dtype) if x.dtype != torch.float32 else w


def linears(group: Linears, x: torch.Tensor, lora: Optional[LayerLora], dropout: Optional[DropoutFn]) -> list[torch.Tensor]:
    """The group's outputs, each with its module's LoRA delta: scaling · B(A(dropout(x)))."""
    if len(group.weights) == 1:
        outs = list(F.linear(x, group.weights[0], group.biases[0]).split(group.sizes, dim=-1))
    else:
        outs = [F.linear(x, w, b) for w, b in zip(group.weights, group.biases)]
    if lora is None:
        return outs
    for i, module in enumerate(group.modules):
        pair = lora.pairs.get(module)
        if pair is not None:
            inputs = dropout(module, x) if dropout is not None else x
            outs[i] = outs[i] + F.linear(F.linear(inputs, _cast(pair[0], x)) * lora.scaling, _cast(pair[1], x))
    return outs


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: Optional[torch.Tensor], shape: LayerShape) -> torch.Tensor:
    groups = shape.num_heads // shape.num_kv_heads
    if groups > 1 and not SDPA_GQA:  # kv head j serves q heads j·g … j·g+g−1 (HF repeat_kv)
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
    gqa = {"enable_gqa": True} if groups > 1 and SDPA_GQA else {}
    if HAS_SDPA and bias is None:
        # No padding: the causal mask alone, which lets SDPA pick its flash kernel.
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa)
    if HAS_SDPA:
        # Clamped to the compute dtype's range first: float32's min would round to −inf in bf16.
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias.clamp(min=torch.finfo(q.dtype).min).to(q.dtype), **gqa)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (shape.head_dim**-0.5) + bias
    return torch.matmul(torch.softmax(scores.to(torch.float32), dim=-1).to(q.dtype), v)


def decoder_layer(
    h: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    bias: Optional[torch.Tensor],
    weights: LayerWeights,
    lora: Optional[LayerLora],
    shape: LayerShape,
    dropout: Optional[DropoutFn] = None,
) -> torch.Tensor:
    batch, length, _ = h.shape
    x = rms_norm(h, weights.input_norm, shape.eps)
    q, k, v = linears(weights.qkv, x, lora, dropout)
    q = q.reshape(batch, length, shape.num_heads, shape.head_dim).transpose(1, 2)
    k = k.reshape(batch, length, shape.num_kv_heads, shape.head_dim).transpose(1, 2)
    v = v.reshape(batch, length, shape.num_kv_heads, shape.head_dim).transpose(1, 2)
    if shape.qk_norm:
        q = rms_norm(q, weights.q_norm, shape.eps)
        k = rms_norm(k, weights.k_norm, shape.eps)
    q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
    out = attention(q, k, v, bias, shape).transpose(1, 2).reshape(batch, length, shape.num_heads * shape.head_dim)
    h = h + linears(weights.o, out, lora, dropout)[0]
    x = rms_norm(h, weights.post_norm, shape.eps)
    gate, up = linears(weights.gate_up, x, lora, dropout)
    return h + linears(weights.down, F.silu(gate) * up, lora, dropout)[0]


_COMPILED: dict[str, Callable] = {}


def compiled_decoder_layer() -> Callable:
    """decoder_layer under torch.compile, made once and shared by every layer and model (the
    weights are arguments, so one graph serves all layers; shapes that change between
    micro-batches make it dynamic after the first recompilation)."""
    if "layer" not in _COMPILED:
        _COMPILED["layer"] = torch.compile(decoder_layer, dynamic=True)
    return _COMPILED["layer"]
