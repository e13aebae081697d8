"""Where a model takes LoRA pairs: module path -> (in_features, out_features), in a fixed order.

The native model derives it from config.json (the seven decoder linears by their HF names); the
transformers source reads it off the PEFT-wrapped model, so any architecture's module names work.
Both give PEFT's saved key names, which is what makes a checkpoint move between sources."""
from __future__ import annotations

from ..model.linear_modules import linear_features, linear_name
from ..model.model_config import ModelConfig
from .lora_config import LoraConfig, validated_lora_config

# module path (as in the base model, e.g. "model.layers.0.self_attn.q_proj") -> (in, out)
LoraLayout = dict[str, tuple[int, int]]


def peft_key(module_path: str, matrix: str) -> str:
    """The name PEFT saves a LoRA matrix under (adapter name dropped), as vLLM loads it."""
    return f"base_model.model.{module_path}.lora_{matrix}.weight"


def native_lora_layout(model_config: ModelConfig, config: LoraConfig) -> LoraLayout:
    config = validated_lora_config(config)  # the seven known linears only
    layout: LoraLayout = {}
    for layer in range(model_config.num_layers):
        for module in config.target_modules:
            layout[linear_name(layer, module)] = linear_features(model_config, module)
    return layout
