"""torch.model_source: which code computes the policy. `native` (default): this package's
Qwen2/Qwen3/Llama decoder, needing only torch. `transformers`: AutoModelForCausalLM + peft LoRA,
for any architecture transformers has. Both give the Learner the same interface, the same PEFT
key names and so the same checkpoints and exports."""
from __future__ import annotations

import torch

from ..lora.lora_config import LoraConfig
from .causal_lm import CausalLM


def base_dtype(device: torch.device, setting: str = "auto") -> torch.dtype:
    """Frozen base weights (torch.dtype): auto = bf16 on GPUs (the LoRA weights and AdamW stay
    float32), float32 on CPU."""
    if setting == "bfloat16" and device.type != "cuda":
        raise ValueError(f'torch.dtype "bfloat16" needs a CUDA device; this learner runs on {device.type}')
    if setting == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return torch.bfloat16 if setting == "bfloat16" else torch.float32


def load_model(config: dict, lora: LoraConfig, device: torch.device):
    directory, section = config["model"]["dir"], config["torch"]
    if section["model_source"] == "transformers":
        from .transformers_lm import TransformersCausalLM  # imports transformers and peft

        return TransformersCausalLM.load(
            directory, lora, device, base_dtype(device, section["dtype"]), section["attn_implementation"], section["gradient_checkpointing"]
        )
    return CausalLM.load(directory, device=device, dtype=base_dtype(device, section["dtype"]))
