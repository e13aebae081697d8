"""The trainable LoRA weights of a model, held in PEFT's layout: A [r, in], B [out, r], keyed by
PEFT's saved names (base_model.model.model.layers.{i}.{self_attn|mlp}.{module}.lora_{A|B}.weight).

The base model never holds an adapter: a forward pass is given one, or none for the reference
policy, so the reference costs no extra memory.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from ..errors import AdapterError
from ..model.linear_modules import MODULE_GROUP, linear_features
from ..model.model_config import ModelConfig
from .lora_config import LoraConfig, validated_lora_config


def peft_key(layer: int, module: str, matrix: str) -> str:
    return f"base_model.model.model.layers.{layer}.{MODULE_GROUP[module]}.{module}.lora_{matrix}.weight"


class LoraAdapter(nn.Module):
    def __init__(self, model_config: ModelConfig, config: LoraConfig, tensors: dict[str, torch.Tensor]):
        super().__init__()
        self.model_config = model_config
        self.config = config
        self.scaling = config.scaling
        # nn.ParameterDict keys may not contain ".", so parameters are held by index.
        self.keys: list[str] = []
        self.weights = nn.ParameterList()
        self._index: dict[tuple[int, str, str], int] = {}
        for layer in range(model_config.num_layers):
            for module in config.target_modules:
                for matrix in ("A", "B"):
                    key = peft_key(layer, module, matrix)
                    self._index[(layer, module, matrix)] = len(self.keys)
                    self.keys.append(key)
                    self.weights.append(nn.Parameter(tensors[key].detach().clone().to(torch.float32)))

    @staticmethod
    def create(model_config: ModelConfig, config: LoraConfig, seed: int) -> "LoraAdapter":
        """A fresh adapter as PEFT initialises one: A Kaiming-uniform (bound 1/√in), B zero."""
        config = validated_lora_config(config)
        generator = torch.Generator().manual_seed(seed)
        tensors = {}
        for layer in range(model_config.num_layers):
            for module in config.target_modules:
                fan_in, fan_out = linear_features(model_config, module)
                bound = 1 / math.sqrt(fan_in)
                tensors[peft_key(layer, module, "A")] = (torch.rand(config.rank, fan_in, generator=generator) * 2 - 1) * bound
                tensors[peft_key(layer, module, "B")] = torch.zeros(fan_out, config.rank)
        return LoraAdapter(model_config, config, tensors)

    @staticmethod
    def from_peft_tensors(model_config: ModelConfig, config: LoraConfig, tensors: dict[str, torch.Tensor]) -> "LoraAdapter":
        """An adapter holding given PEFT tensors; every target's pair must be there, and nothing else."""
        config = validated_lora_config(config)
        expected = set()
        for layer in range(model_config.num_layers):
            for module in config.target_modules:
                fan_in, fan_out = linear_features(model_config, module)
                for matrix, shape in (("A", [config.rank, fan_in]), ("B", [fan_out, config.rank])):
                    key = peft_key(layer, module, matrix)
                    expected.add(key)
                    tensor = tensors.get(key)
                    if tensor is None:
                        raise AdapterError(f"adapter lacks {key!r} (shape {shape})")
                    if list(tensor.shape) != shape:
                        raise AdapterError(f"adapter tensor {key!r} has shape {list(tensor.shape)}; the model and r={config.rank} need {shape}")
        stray = [key for key in tensors if key not in expected]
        if stray:
            raise AdapterError(
                "adapter_model.safetensors holds tensors the config's target_modules and the model's layers do not explain: "
                + ", ".join(repr(k) for k in stray[:3])
                + (", ..." if len(stray) > 3 else "")
            )
        return LoraAdapter(model_config, config, tensors)

    def pair(self, layer: int, module: str) -> tuple[torch.Tensor, torch.Tensor] | None:
        a = self._index.get((layer, module, "A"))
        if a is None:
            return None
        return self.weights[a], self.weights[self._index[(layer, module, "B")]]

    def named_tensors(self) -> dict[str, torch.Tensor]:
        """PEFT key -> parameter, in a fixed order (layer, module, A before B)."""
        return {key: self.weights[i] for i, key in enumerate(self.keys)}

    def peft_tensors(self) -> dict[str, torch.Tensor]:
        """Detached float32 CPU copies in PEFT's layout."""
        return {key: p.detach().to("cpu", torch.float32).clone() for key, p in self.named_tensors().items()}

    def assign(self, tensors: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for key, p in self.named_tensors().items():
                p.copy_(tensors[key])
