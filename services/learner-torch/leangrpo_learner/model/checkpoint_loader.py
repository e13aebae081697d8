"""Reads a Hugging Face model directory: config.json and model.safetensors, or shards listed
in model.safetensors.index.json. F32, BF16 and F16 tensors are widened to the compute dtype."""
from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from .. import safetensors_io
from ..errors import ModelError
from .linear_modules import expected_weights
from .model_config import ModelConfig, parse_model_config

ROTARY_BUFFER = re.compile(r"^model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq$")


def read_model_config(directory: Path) -> ModelConfig:
    path = directory / "config.json"
    try:
        raw = json.loads(path.read_text("utf-8"))
    except OSError as error:
        raise ModelError(f"cannot read {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ModelError(f"{path} is not valid JSON ({error})") from None
    return parse_model_config(raw)


def _weight_files(directory: Path) -> list[Path]:
    index = directory / "model.safetensors.index.json"
    if index.exists():
        weight_map = json.loads(index.read_text("utf-8")).get("weight_map")
        if not isinstance(weight_map, dict):
            raise ModelError(f'{index}: "weight_map" must be an object of tensor name -> file')
        return [directory / name for name in sorted(set(weight_map.values()))]
    single = directory / "model.safetensors"
    if not single.exists():
        raise ModelError(f"{directory} has neither model.safetensors nor model.safetensors.index.json")
    return [single]


def load_weights(directory: Path, config: ModelConfig, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """The tensors the forward pass reads, checked against the shapes the config implies."""
    expected = expected_weights(config)
    found: dict[str, torch.Tensor] = {}
    for file in _weight_files(directory):
        try:
            tensors = safetensors_io.load_file(file)
        except safetensors_io.SafetensorsError as error:
            raise ModelError(str(error)) from None
        for name, tensor in tensors.items():
            if name not in expected:
                if (config.tie_word_embeddings and name == "lm_head.weight") or ROTARY_BUFFER.match(name):
                    continue
                raise ModelError(f"{file.name}: tensor {name!r} is not part of a {config.model_type} model with this config.json")
            if list(tensor.shape) != expected[name]:
                raise ModelError(f"{file.name}: tensor {name!r} has shape {list(tensor.shape)}; config.json implies {expected[name]}")
            if not tensor.is_floating_point():
                raise ModelError(f"{file.name}: tensor {name!r} is {tensor.dtype}; accepted: F32, BF16, F16")
            found[name] = tensor.to(dtype)
    missing = [name for name in expected if name not in found]
    if missing:
        raise ModelError(f"{directory}: the checkpoint lacks {', '.join(repr(m) for m in missing[:3])}{', ...' if len(missing) > 3 else ''}")
    return found
