"""torch.model_source: which code computes the policy. `native` (default): this package's
Qwen2/Qwen3/Llama decoder, needing only torch. `transformers`: AutoModelForCausalLM + peft LoRA,
for any architecture transformers has. Both give the Learner the same interface, the same PEFT
key names and so the same checkpoints and exports."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from ..errors import ModelError
from ..lora.lora_config import LoraConfig
from ..reasoning.map_file import REASONING_MAP_FILE, read_reasoning_map_file
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
    (`model.reasoning_vocabulary` is then set; None otherwise). model.dir may be an expanded base
    (expand_checkpoint.py): its map fixes n_s and must be the run's."""
    directory, section = config["model"]["dir"], config["torch"]
    # The vocabulary is resolved from the checkpoint's rows (n_s, or an expanded base's n_s + n_r).
    resolve = (lambda rows: reasoning_vocabulary_of(config["model"], rows)) if reasoning_settings(config["model"]).enabled else None
    if section["model_source"] == "transformers":
        from .transformers_lm import TransformersCausalLM  # imports transformers and peft

        return TransformersCausalLM.load(
            directory,
            lora,
            device,
            base_dtype(device, section["dtype"]),
            section["attn_implementation"],
            section["gradient_checkpointing"],
            expand=resolve,
        )
    vocabulary = resolve(read_model_config(Path(directory)).vocab_size) if resolve is not None else None
    model = CausalLM.load(directory, device=device, dtype=base_dtype(device, section["dtype"]))
    if vocabulary is not None:
        expand_native(model, vocabulary.map)
    model.reasoning_vocabulary = vocabulary
    return model


def reasoning_settings(model_section: dict) -> ReasoningSettings:
    return ReasoningSettings(
        model_section.get("reasoning_vocab_size", 0),
        tuple(model_section.get("reasoning_markers", DEFAULT_MARKERS)),
        model_section.get("reasoning_mask", "free"),
        model_section.get("reasoning_map"),
    )


def reasoning_vocabulary_of(model_section: dict, rows: int | None):
    """The resolved vocabulary, None when off; ModelError names the key. `rows`: the checkpoint's
    vocab_size; n_s is that, or for an expanded base (one holding reasoning_token_map.json) its map's."""
    settings = reasoning_settings(model_section)
    if not settings.enabled or rows is None:
        return None
    directory = Path(model_section["dir"])
    try:
        saved = read_reasoning_map_file(directory) if (directory / REASONING_MAP_FILE).exists() else None
        vocabulary = resolve_reasoning_vocabulary(settings, saved.map.standard_size if saved else rows, directory)
        if saved is not None and vocabulary is not None and saved.map.sha256 != vocabulary.map.sha256:
            raise ReasoningVocabError(
                f"{directory} holds a base expanded with another reasoning map (n_r {saved.map.reasoning_size}, sha256 {saved.map.sha256[:12]}…); "
                "model.reasoning_vocab_size / model.reasoning_map must match it"
            )
        return vocabulary
    except ReasoningVocabError as error:
        raise ModelError(str(error)) from None


def check_reasoning_vocabulary(config: dict) -> None:
    """Resolves model.reasoning_* against model.dir's config.json and tokenizer before the server
    starts, so bad settings stop it naming the key (ModelError). The model itself still loads on
    first use; a model.dir that cannot be read is left to that load to report."""
    model = config["model"]
    if not model["dir"] or not reasoning_settings(model).enabled:
        return
    try:
        raw = json.loads((Path(model["dir"]) / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return
    rows = raw.get("vocab_size") or (raw.get("text_config") or {}).get("vocab_size")
    if isinstance(rows, int) and not isinstance(rows, bool):
        reasoning_vocabulary_of(model, rows)
