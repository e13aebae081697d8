"""A pre-norm decoder (Qwen2, Qwen3, Llama) with frozen base weights and an optional LoRA
adapter per forward pass. One code path for CPU and CUDA: only the device and the compute
dtype differ (float32 on CPU; bf16 autocast on CUDA, norms and softmax in float32).

Batches are left-padded, so every sequence ends in the last column; position ids are
cumsum(mask) − 1 (left padding does not shift positions).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from ..lora.lora_adapter import LoraAdapter
from ..lora.lora_config import LoraConfig
from ..lora.lora_layout import LoraLayout, native_lora_layout
from .checkpoint_loader import load_weights, read_model_config
from .linear_modules import LINEAR_MODULES, has_bias, linear_name
from .model_config import ModelConfig
from .packed_projections import PackedLinear, pack_layer_projections
from .reasoning_expansion import embed
from .rotary import apply_rotary, inverse_frequencies, rotary_tables

# torch >= 2.0 has a fused attention kernel; torch 1.13 (Debian) takes the plain path.
HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
# torch >= 2.5: SDPA reads grouped kv heads itself (no repeated copies of k and v).
SDPA_GQA = HAS_SDPA and tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 5)


@dataclass
class ForwardOptions:
    adapter: LoraAdapter | None = None
    # Seed of this pass's LoRA dropout masks; None: no dropout (scoring, reference).
    dropout_seed: int | None = None
    gradient_checkpointing: bool = False


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    dtype = x.dtype
    x32 = x.to(torch.float32)
    x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return weight * x32.to(dtype)


class CausalLM:
    def __init__(self, config: ModelConfig, weights: dict[str, torch.Tensor], device: torch.device, name: str = "", pack: bool = True):
        self.config = config
        self.device = device
        self.name = name
        self.weights = {k: v.to(device).requires_grad_(False) for k, v in weights.items()}
        # q/k/v and gate/up as one matmul each (packed_projections.py); FSDP loads with pack=False.
        self.packed: dict[tuple[int, tuple[str, ...]], PackedLinear] = pack_layer_projections(config, self.weights) if pack else {}
        self.base_dtype = self.weights["model.embed_tokens.weight"].dtype
        self.head = self.weights["model.embed_tokens.weight"] if config.tie_word_embeddings else self.weights["lm_head.weight"]
        self.inv_freq = inverse_frequencies(config).to(device)
        self.logit_softcap = None  # none of qwen2 / qwen3 / llama caps logits (Gemma 2/3 do: transformers source)
        self.reasoning_start: int | None = None  # n_s once expanded with a reasoning vocabulary (reasoning_expansion.py)
        # torch.sharding "fsdp": one FSDP2-wrapped module per decoder layer (distributed/fsdp.py).
        self.sharded_layers = None

    @staticmethod
    def load(directory: str | Path, device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32, pack: bool = True) -> "CausalLM":
        directory = Path(directory)
        config = read_model_config(directory)
        return CausalLM(config, load_weights(directory, config, dtype), torch.device(device), str(directory), pack)

    def lora_layout(self, config: LoraConfig) -> LoraLayout:
        return native_lora_layout(self.config, config)

    def parameter_count(self) -> int:
        seen = {id(t): t.numel() for t in self.weights.values()}
        return sum(seen.values())

    def _linear(self, layer: int, module: str, x: torch.Tensor, options: ForwardOptions) -> torch.Tensor:
        name = linear_name(layer, module)
        out = F.linear(x, self.weights[f"{name}.weight"], self.weights.get(f"{name}.bias") if has_bias(self.config, module) else None)
        pair = options.adapter.pair(layer, module) if options.adapter is not None else None
        return out if pair is None else out + self._lora_delta(layer, module, x, pair, options)

    def _projections(self, layer: int, group: tuple[str, ...], x: torch.Tensor, options: ForwardOptions) -> list[torch.Tensor]:
        """The outputs of a group of linears over the same input (q, k, v or gate, up): one matmul
        over the packed matrix, plus each module's LoRA delta (down projections packed too when no
        dropout mask tells them apart)."""
        packed = self.packed.get((layer, group))
        if packed is None:
            return [self._linear(layer, m, x, options) for m in group]
        outs = list(F.linear(x, packed.weight, packed.bias).split(packed.sizes, dim=-1))
        adapter = options.adapter
        pairs = [adapter.pair(layer, m) for m in group] if adapter is not None else [None] * len(group)
        dropout = options.dropout_seed is not None and adapter is not None and adapter.config.dropout > 0
        if all(p is not None for p in pairs) and not dropout:
            a = torch.cat([p[0] for p in pairs])
            down = F.linear(x, a.to(x.dtype) if x.dtype != torch.float32 else a) * adapter.scaling
            for i, (d, (_, b)) in enumerate(zip(down.split(adapter.config.rank, dim=-1), pairs)):
                outs[i] = outs[i] + F.linear(d, b.to(x.dtype) if x.dtype != torch.float32 else b)
            return outs
        for i, (module, pair) in enumerate(zip(group, pairs)):
            if pair is not None:
                outs[i] = outs[i] + self._lora_delta(layer, module, x, pair, options)
        return outs

    def _lora_delta(self, layer: int, module: str, x: torch.Tensor, pair: tuple[torch.Tensor, torch.Tensor], options: ForwardOptions) -> torch.Tensor:
        a, b = pair
        inputs = x
        p = options.adapter.config.dropout
        if options.dropout_seed is not None and p > 0:
            # A generator per (seed, layer, module): the same mask when checkpointing recomputes.
            generator = torch.Generator(device=x.device).manual_seed(
                (options.dropout_seed * 1_000_003 + layer * len(LINEAR_MODULES) + LINEAR_MODULES.index(module)) % (2**63)
            )
            keep = torch.empty(x.shape, device=x.device).bernoulli_(1 - p, generator=generator)
            inputs = x * keep.to(x.dtype) / (1 - p)
        down = F.linear(inputs, a.to(x.dtype) if x.dtype != torch.float32 else a) * options.adapter.scaling
        return F.linear(down, b.to(x.dtype) if x.dtype != torch.float32 else b)

    def _attention(self, layer: int, x: torch.Tensor, cos, sin, bias: torch.Tensor, options: ForwardOptions) -> torch.Tensor:
        c = self.config
        batch, length, _ = x.shape
        q, k, v = self._projections(layer, ("q_proj", "k_proj", "v_proj"), x, options)
        q = q.reshape(batch, length, c.num_heads, c.head_dim).transpose(1, 2)
        k = k.reshape(batch, length, c.num_kv_heads, c.head_dim).transpose(1, 2)
        v = v.reshape(batch, length, c.num_kv_heads, c.head_dim).transpose(1, 2)
        if c.qk_norm:
            q = rms_norm(q, self.weights[f"model.layers.{layer}.self_attn.q_norm.weight"], c.rms_norm_eps)
            k = rms_norm(k, self.weights[f"model.layers.{layer}.self_attn.k_norm.weight"], c.rms_norm_eps)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        groups = c.num_heads // c.num_kv_heads
        if groups > 1 and not SDPA_GQA:  # kv head j serves q heads j·g … j·g+g−1 (HF repeat_kv)
            k = k.repeat_interleave(groups, dim=1)
            v = v.repeat_interleave(groups, dim=1)
        gqa = {"enable_gqa": True} if groups > 1 and SDPA_GQA else {}
        if HAS_SDPA and bias is None:
            # No padding: the causal mask alone, which lets SDPA pick its flash kernel.
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa)
        elif HAS_SDPA:
            # Clamped to the compute dtype's range first: float32's min would round to −inf in bf16.
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.clamp(min=torch.finfo(q.dtype).min).to(q.dtype), **gqa)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) * (c.head_dim**-0.5) + bias
            out = torch.matmul(torch.softmax(scores.to(torch.float32), dim=-1).to(q.dtype), v)
        out = out.transpose(1, 2).reshape(batch, length, c.num_heads * c.head_dim)
        return self._linear(layer, "o_proj", out, options)

    def _layer(self, layer: int, h: torch.Tensor, cos, sin, bias, options: ForwardOptions) -> torch.Tensor:
        w, eps = self.weights, self.config.rms_norm_eps
        h = h + self._attention(layer, rms_norm(h, w[f"model.layers.{layer}.input_layernorm.weight"], eps), cos, sin, bias, options)
        x = rms_norm(h, w[f"model.layers.{layer}.post_attention_layernorm.weight"], eps)
        gate, up = self._projections(layer, ("gate_proj", "up_proj"), x, options)
        gated = F.silu(gate) * up
        return h + self._linear(layer, "down_proj", gated, options)

    @staticmethod
    def _attention_bias(mask: torch.Tensor, length: int) -> torch.Tensor:
        causal = torch.ones(length, length, dtype=torch.bool, device=mask.device).tril()
        allowed = causal[None, None] & mask.bool()[:, None, None, :]
        # A large negative rather than −inf: a padded query row sees only pads, and must not turn NaN.
        return torch.zeros(allowed.shape, dtype=torch.float32, device=mask.device).masked_fill(~allowed, torch.finfo(torch.float32).min)

    def hidden_states(self, ids: torch.Tensor, mask: torch.Tensor, options: ForwardOptions) -> torch.Tensor:
        """Final-norm hidden states [batch, length, hidden] of left-padded ids with their 0/1 mask."""
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cos, sin = rotary_tables(self.inv_freq, positions)
        length = ids.shape[1]
        bias = None if HAS_SDPA and bool(mask.all()) else self._attention_bias(mask, length)
        # An adapter's trained reasoning rows replace the base's copies (reasoning_expansion.py).
        h = embed(ids, self.weights["model.embed_tokens.weight"], options.adapter)
        for layer in range(self.config.num_layers):
            if self.sharded_layers is not None:  # gathers the layer, checkpointing inside (fsdp.py)
                h = self.sharded_layers[layer](h, cos, sin, bias, options)
            elif options.gradient_checkpointing and torch.is_grad_enabled():
                h = checkpoint(self._layer, layer, h, cos, sin, bias, options, use_reentrant=False)
            else:
                h = self._layer(layer, h, cos, sin, bias, options)
        return rms_norm(h, self.weights["model.norm.weight"], self.config.rms_norm_eps)
