"""A Hugging Face model directory (config.json + model.safetensors) with seeded random weights, so
plain transformers, the learner's native model and its transformers source all load the very same
numbers, and nothing is downloaded."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from leangrpo_learner import safetensors_io
from leangrpo_learner.model.linear_modules import expected_weights
from leangrpo_learner.model.model_config import parse_model_config

INIT_STD = 0.02  # transformers' initializer_range for these models


def random_weights(config: dict, seed: int, device: str = "cpu", dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """Every tensor the architecture reads: norms 1, everything else N(0, 0.02²)."""
    generator = torch.Generator(device=device).manual_seed(seed)
    weights = {}
    for name, shape in expected_weights(parse_model_config(config)).items():
        if name.endswith("norm.weight"):
            weights[name] = torch.ones(shape, device=device, dtype=dtype)
        else:
            weights[name] = (torch.randn(shape, generator=generator, device=device) * INIT_STD).to(dtype)
    return weights


def write_random_model(config: dict, directory: Path, seed: int = 0, dtype: str = "float32") -> Path:
    """Writes the directory (weights stored in `dtype`) and returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    (directory / "config.json").write_text(json.dumps({**config, "torch_dtype": dtype}, indent=2))
    # Drawn on the GPU where there is one (a 1B model's fp32 weights take seconds there, a minute on CPU).
    tensors = random_weights(config, seed, device="cuda" if torch.cuda.is_available() else "cpu", dtype=torch_dtype)
    (directory / "model.safetensors").write_bytes(safetensors_io.serialize(tensors, {"format": "pt"}))
    return directory


def random_adapter(layout_keys_shapes: dict[str, list[int]], seed: int) -> dict[str, torch.Tensor]:
    """LoRA tensors with B ≠ 0 (a fresh adapter's B is zero and would change nothing)."""
    generator = torch.Generator().manual_seed(seed)
    return {key: torch.randn(shape, generator=generator) * 0.05 for key, shape in layout_keys_shapes.items()}
