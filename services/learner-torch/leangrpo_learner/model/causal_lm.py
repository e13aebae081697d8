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
from torch.utils.checkpoint import checkpoint

from ..lora.lora_adapter import LoraAdapter
from ..lora.lora_config import LoraConfig
from ..lora.lora_layout import LoraLayout, native_lora_layout
from .checkpoint_loader import load_weights, read_model_config
from .decoder_layer import HAS_SDPA, LayerLora, LayerShape, LayerWeights, Linears, compiled_decoder_layer, decoder_layer, rms_norm
from .linear_modules import LINEAR_MODULES, has_bias, linear_features, linear_name
from .model_config import ModelConfig
from .packed_projections import pack_layer_projections
from .reasoning_expansion import embed
from .rotary import inverse_frequencies, rotary_tables


@dataclass
class ForwardOptions:
    adapter: LoraAdapter | None = None
    # Seed of this pass's LoRA dropout masks; None: no dropout (scoring, reference).
    dropout_seed: int | None = None
    gradient_checkpointing: bool = False


class CausalLM:
    def __init__(self, config: ModelConfig, weights: dict[str, torch.Tensor], device: torch.device, name: str = "", pack: bool = True):
        self.config = config
        self.device = device
        self.name = name
        self.weights = {k: v.to(device).requires_grad_(False) for k, v in weights.items()}
        # q/k/v and gate/up as one matmul each (packed_projections.py); FSDP loads with pack=False.
        self.packed: dict[tuple[int, tuple[str, ...]], Linears] = pack_layer_projections(config, self.weights) if pack else {}
        self.layer_shape = LayerShape(config.num_heads, config.num_kv_heads, config.head_dim, config.rms_norm_eps, config.qk_norm)
        self.compiled_layer = None  # compile_layers() (torch.compile: true)
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

    def compile_layers(self) -> None:
        """torch.compile: true. Passes without LoRA dropout run the compiled layer (decoder_layer.py)."""
        self.compiled_layer = compiled_decoder_layer()

    def _layer_weights(self, layer: int) -> LayerWeights:
        """The layer's frozen tensors, read from the weights dict on every pass (FSDP swaps gathered
        tensors into it), with q/k/v and gate/up packed where the model was loaded packed."""
        w, c = self.weights, self.config

        def group(modules: tuple[str, ...]) -> Linears:
            packed = self.packed.get((layer, modules))
            if packed is not None:
                return packed
            names = [linear_name(layer, m) for m in modules]
            biases = tuple(w[f"{n}.bias"] if has_bias(c, m) else None for n, m in zip(names, modules))
            return Linears(modules, tuple(w[f"{n}.weight"] for n in names), biases, tuple(linear_features(c, m)[1] for m in modules))

        prefix = f"model.layers.{layer}"
        return LayerWeights(
            w[f"{prefix}.input_layernorm.weight"],
            w[f"{prefix}.post_attention_layernorm.weight"],
            group(("q_proj", "k_proj", "v_proj")),
            group(("o_proj",)),
            group(("gate_proj", "up_proj")),
            group(("down_proj",)),
            w.get(f"{prefix}.self_attn.q_norm.weight") if c.qk_norm else None,
            w.get(f"{prefix}.self_attn.k_norm.weight") if c.qk_norm else None,
        )

    @staticmethod
    def _layer_lora(adapter: LoraAdapter | None, layer: int) -> LayerLora | None:
        if adapter is None:
            return None
        return LayerLora({m: adapter.pair(layer, m) for m in LINEAR_MODULES}, adapter.scaling)

    @staticmethod
    def _dropout(options: ForwardOptions, layer: int):
        """The pass's LoRA dropout for one layer, or None (scoring, the reference, dropout 0)."""
        p = options.adapter.config.dropout if options.adapter is not None else 0.0
        if options.dropout_seed is None or p <= 0:
            return None
        seed = options.dropout_seed

        def apply(module: str, x: torch.Tensor) -> torch.Tensor:
            # A generator per (seed, layer, module): the same mask when checkpointing recomputes.
            generator = torch.Generator(device=x.device).manual_seed(
                (seed * 1_000_003 + layer * len(LINEAR_MODULES) + LINEAR_MODULES.index(module)) % (2**63)
            )
            keep = torch.empty(x.shape, device=x.device).bernoulli_(1 - p, generator=generator)
            return x * keep.to(x.dtype) / (1 - p)

        return apply

    def _layer(self, layer: int, h: torch.Tensor, cos, sin, bias, options: ForwardOptions) -> torch.Tensor:
        dropout = self._dropout(options, layer)
        run = self.compiled_layer if self.compiled_layer is not None and dropout is None else decoder_layer
        return run(h, cos, sin, bias, self._layer_weights(layer), self._layer_lora(options.adapter, layer), self.layer_shape, dropout)

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
