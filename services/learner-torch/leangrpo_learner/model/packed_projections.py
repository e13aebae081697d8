"""The linears of a decoder layer that read the same input, packed into one matrix: q, k and v
(after the input norm) and gate and up (after the post-attention norm).

One matmul over the packed matrix replaces two or three: a GPU runs one larger GEMM instead of
several narrow ones (a 0.5B model's k and v have 128 output features), the input is read once,
and the backward computes one input gradient instead of summing three. Each module's LoRA pair
stays its own pair of matmuls (decoder_layer.py): packing the A matrices too saves little (they
are r rows each) and moved float32 rounding enough to cost margin in the parity tests.

The model's weights dict keeps every module's weight by its HF name, as views into the packed
matrix, so checkpoints, the transformers parity checks and FSDP's per-name sharding see the
same tensors as before. FSDP (distributed/fsdp.py) loads unpacked: it shards tensors by name,
and views of one matrix would each be gathered whole."""
from __future__ import annotations

import torch

from .decoder_layer import Linears
from .linear_modules import has_bias, linear_features, linear_name
from .model_config import ModelConfig

# Each group's modules, in the order their outputs are packed.
PACKED_GROUPS: tuple[tuple[str, ...], ...] = (("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj"))


def pack_layer_projections(config: ModelConfig, weights: dict[str, torch.Tensor]) -> dict[tuple[int, tuple[str, ...]], Linears]:
    """Packs every layer's groups, each as Linears holding one matrix; `weights` is updated in place
    to hold views into the packed matrices (the separate tensors are let go, so memory does not grow)."""
    packed = {}
    for layer in range(config.num_layers):
        for group in PACKED_GROUPS:
            biased = [has_bias(config, m) for m in group]
            if any(biased) and not all(biased):  # no known model mixes them; packing would need zero biases
                continue
            names = [linear_name(layer, m) for m in group]
            sizes = tuple(linear_features(config, m)[1] for m in group)
            weight = torch.cat([weights[f"{n}.weight"] for n in names])
            bias = torch.cat([weights[f"{n}.bias"] for n in names]) if all(biased) else None
            for name, w, b in zip(names, weight.split(sizes), bias.split(sizes) if bias is not None else [None] * len(names)):
                weights[f"{name}.weight"] = w
                if b is not None:
                    weights[f"{name}.bias"] = b
            packed[(layer, group)] = Linears(group, (weight,), (bias,), sizes)
    return packed
