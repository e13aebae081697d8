"""torch.model_source: which code computes the policy. `native` (default): this package's
Qwen2/Qwen3/Llama decoder, needing only torch. `transformers`: AutoModelForCausalLM + peft LoRA,
for any architecture transformers has. Both give the Learner the same interface, the same PEFT
key names and so the same checkpoints and exports."""
from __future__ import annotations

from pathlib import Path

import torch

from ..errors import ModelError
from ..lora.lora_config import LoraConfig
from ..reasoning.token_map import ReasoningVocabError
from ..reasoning.vocabulary import DEFAULT_MARKERS, ReasoningSettings, resolve_reasoning_vocabulary
from .causal_lm import CausalLM
from .checkpoint_loader import read_model_config
from .reasoning_expansion import expand_native


def base_dtype(device: torch.device, setting: str = "auto") -> torch.dtype:
    """Frozen base weights (torch.dtype): auto = bf16 on GPUs (the LoRA weights and AdamW stay
    float32), float32 on CPU."""
    if setting == "bfloat16" and device.type != "cuda":
        raise ValueError(f'torch.dtype "bfloat16" needs a CUDA device; this learner runs on {device.type}')
    if setting == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return torch.bfloat16 if setting == "bfloat16" else torch.float32


def load_model(config: dict, lora: LoraConfig, device: torch.device):
    """The model of model.dir, expanded to its reasoning vocabulary when model.reasoning_* ask for one
    (`model.reasoning_vocabulary` is then set; None otherwise)."""
    directory, section = config["model"]["dir"], config["torch"]
    vocabulary = reasoning_vocabulary_of(config["model"], read_model_config(Path(directory)).vocab_size if section["model_source"] == "native" else None)
    token_map = vocabulary.map if vocabulary is not None else None
    if section["model_source"] == "transformers":
        from .transformers_lm import TransformersCausalLM  # imports transformers and peft

        model = TransformersCausalLM.load(
            directory,
            lora,
            device,
            base_dtype(device, section["dtype"]),
            section["attn_implementation"],
            section["gradient_checkpointing"],
            expand=(lambda n_s: reasoning_vocabulary_of(config["model"], n_s)) if reasoning_settings(config["model"]).enabled else None,
        )
        return model
    model = CausalLM.load(directory, device=device, dtype=base_dtype(device, section["dtype"]))
    if token_map is not None:
        expand_native(model, token_map)
    model.reasoning_vocabulary = vocabulary
    return model


def reasoning_settings(model_section: dict) -> ReasoningSettings:
    return ReasoningSettings(
        model_section.get("reasoning_vocab_size", 0),
        tuple(model_section.get("reasoning_markers", DEFAULT_MARKERS)),
        model_section.get("reasoning_mask", "free"),
        model_section.get("reasoning_map"),
    )


def reasoning_vocabulary_of(model_section: dict, standard_size: int | None):
    """The resolved vocabulary (n_s = the base config's vocab_size), None when off; ModelError names the key."""
    settings = reasoning_settings(model_section)
    if not settings.enabled or standard_size is None:
        return None
    try:
        return resolve_reasoning_vocabulary(settings, standard_size, model_section["dir"])
    except ReasoningVocabError as error:
        raise ModelError(str(error)) from None
