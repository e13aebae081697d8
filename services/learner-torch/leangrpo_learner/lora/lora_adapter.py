"""The trainable LoRA weights of a model, held in PEFT's layout: A [r, in], B [out, r], keyed by
PEFT's saved names (base_model.model.<module path>.lora_{A|B}.weight).

The base model never holds an adapter: a forward pass is given one, or none for the reference
policy, so the reference costs no extra memory. (The transformers source binds these same
parameters into its PEFT modules; see model/transformers_lm.py.)

With a reasoning vocabulary the adapter also holds the reasoning rows it trains (token_rows.py),
after the LoRA pairs, so AdamW, checkpoints and the PEFT export carry them like any other tensor.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from ..errors import AdapterError
from ..model.linear_modules import linear_name
from .lora_config import LoraConfig, validated_lora_config
from .lora_layout import LoraLayout, peft_key
from .token_rows import TokenRows


class LoraAdapter(nn.Module):
    def __init__(self, layout: LoraLayout, config: LoraConfig, tensors: dict[str, torch.Tensor], token_rows: TokenRows | None = None):
        super().__init__()
        self.token_rows = token_rows
        self.layout = layout
        self.config = config
        self.scaling = config.scaling
        # nn.ParameterDict keys may not contain ".", so parameters are held by index.
        self.keys: list[str] = []
        self.weights = nn.ParameterList()
        self._index: dict[tuple[str, str], int] = {}
        for path in layout:
            for matrix in ("A", "B"):
                key = peft_key(path, matrix)
                self._index[(path, matrix)] = len(self.keys)
                self.keys.append(key)
                self.weights.append(nn.Parameter(tensors[key].detach().clone().to(torch.float32)))
        for key in token_rows.keys if token_rows else ():
            self._index[(key, "rows")] = len(self.keys)
            self.keys.append(key)
            self.weights.append(nn.Parameter(tensors[key].detach().clone().to(torch.float32)))

    @staticmethod
    def create(layout: LoraLayout, config: LoraConfig, seed: int, rows: tuple[TokenRows, dict[str, torch.Tensor]] | None = None) -> "LoraAdapter":
        """A fresh adapter as PEFT initialises one: A Kaiming-uniform (bound 1/√in), B zero; `rows`:
        the reasoning rows to train and their initial values (the base's copies) by PEFT key."""
        config = validated_lora_config(config, accepted_modules=None)
        generator = torch.Generator().manual_seed(seed)
        tensors = {}
        for path, (fan_in, fan_out) in layout.items():
            bound = 1 / math.sqrt(fan_in)
            tensors[peft_key(path, "A")] = (torch.rand(config.rank, fan_in, generator=generator) * 2 - 1) * bound
            tensors[peft_key(path, "B")] = torch.zeros(fan_out, config.rank)
        if rows is not None:
            tensors.update(rows[1])
        return LoraAdapter(layout, config, tensors, rows[0] if rows is not None else None)

    @staticmethod
    def from_peft_tensors(
        layout: LoraLayout, config: LoraConfig, tensors: dict[str, torch.Tensor], token_rows: TokenRows | None = None, hidden_size: int = 0
    ) -> "LoraAdapter":
        """An adapter holding given PEFT tensors; every target's pair (and token rows [count, hidden_size]) must be there, and nothing else."""
        config = validated_lora_config(config, accepted_modules=None)
        expected = set()
        for key in token_rows.keys if token_rows else ():
            expected.add(key)
            tensor = tensors.get(key)
            shape = [token_rows.count, hidden_size]
            if tensor is None:
                raise AdapterError(f"adapter lacks {key!r} (shape {shape}) for its trainable_token_indices")
            if list(tensor.shape) != shape:
                raise AdapterError(f"adapter tensor {key!r} has shape {list(tensor.shape)}; need {shape}")
        for path, (fan_in, fan_out) in layout.items():
            for matrix, shape in (("A", [config.rank, fan_in]), ("B", [fan_out, config.rank])):
                key = peft_key(path, matrix)
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
        return LoraAdapter(layout, config, tensors, token_rows)

    def pair_at(self, module_path: str) -> tuple[torch.Tensor, torch.Tensor] | None:
        a = self._index.get((module_path, "A"))
        if a is None:
            return None
        return self.weights[a], self.weights[self._index[(module_path, "B")]]

    def pair(self, layer: int, module: str) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The native model's lookup: decoder layer and HF module name."""
        return self.pair_at(linear_name(layer, module))

    def rows(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The trained reasoning rows: (embedding rows, head rows), the same tensor twice for a tied model; None without."""
        if self.token_rows is None:
            return None
        keys = self.token_rows.keys
        embedding = self.weights[self._index[(keys[0], "rows")]]
        return embedding, self.weights[self._index[(keys[1], "rows")]] if len(keys) > 1 else embedding

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
