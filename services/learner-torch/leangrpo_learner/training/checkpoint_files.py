"""A learner checkpoint on disk, in the TS learner's format (services/learner/src/training/
checkpoint-files.ts), so a checkpoint written by one learner resumes on the other:
  adapter/                 the PEFT adapter (float32, exact)
  optimizer.safetensors    AdamW moments "<peft key>.exp_avg" / ".exp_avg_sq" in the [in, r] / [r, out] layout
  trainer_state.json       format_version 1, step, adapter_version, algorithm, optimizer_updates, seed, base_model
  reasoning_token_map.json with a reasoning vocabulary (also in adapter/); AdamW moments of its
                           token rows keep their [rows, hidden] layout
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import torch

from ..artifact_names import CHECKPOINT_ADAPTER_DIR
from .. import safetensors_io
from ..errors import CheckpointError

ADAPTER_DIR = CHECKPOINT_ADAPTER_DIR
OPTIMIZER_FILE = "optimizer.safetensors"
STATE_FILE = "trainer_state.json"
FORMAT_VERSION = 1
MOMENT = re.compile(r"^(.*)\.(exp_avg|exp_avg_sq)$")


@dataclass
class TrainerState:
    step: int
    adapter_version: int
    algorithm: str
    optimizer_updates: int
    seed: int
    base_model: str


def write_checkpoint_state(directory: Path, state: TrainerState, moments: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tensors = {}
    for key, (m, v) in moments.items():
        tensors[f"{key}.exp_avg"] = m
        tensors[f"{key}.exp_avg_sq"] = v
    (directory / OPTIMIZER_FILE).write_bytes(safetensors_io.serialize(tensors, {"format": "pt"}))
    doc = {
        "format_version": FORMAT_VERSION,
        "step": state.step,
        "adapter_version": state.adapter_version,
        "algorithm": state.algorithm,
        "optimizer_updates": state.optimizer_updates,
        "seed": state.seed,
        "base_model": state.base_model,
    }
    (directory / STATE_FILE).write_text(json.dumps(doc, indent=2))


def _field(doc: dict, key: str, file: Path) -> int:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CheckpointError(f'{file}: "{key}" is {json.dumps(value)}; expected a non-negative integer')
    return value


def read_checkpoint_state(directory: Path) -> tuple[TrainerState, dict[str, tuple[torch.Tensor, torch.Tensor]]]:
    file = directory / STATE_FILE
    try:
        doc = json.loads(file.read_text("utf-8"))
    except OSError as error:
        code = {2: "ENOENT", 20: "ENOTDIR", 13: "EACCES", 21: "EISDIR"}.get(error.errno, error.strerror)
        raise CheckpointError(f"cannot read {STATE_FILE}: {code}; is it a directory written by SaveCheckpoint?") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        # Not the parser's message: what a file holds is not the client's to read.
        raise CheckpointError(f"{STATE_FILE} is not valid JSON; is it a directory written by SaveCheckpoint?") from None
    if not isinstance(doc, dict) or doc.get("format_version") != FORMAT_VERSION:
        version = doc.get("format_version") if isinstance(doc, dict) else None
        raise CheckpointError(f"{file}: format_version {json.dumps(version)} is not supported; accepted: {FORMAT_VERSION}")
    state = TrainerState(
        step=_field(doc, "step", file),
        adapter_version=_field(doc, "adapter_version", file),
        algorithm=doc["algorithm"] if isinstance(doc.get("algorithm"), str) else "",
        optimizer_updates=_field(doc, "optimizer_updates", file),
        seed=_field(doc, "seed", file),
        base_model=doc["base_model"] if isinstance(doc.get("base_model"), str) else "",
    )
    try:
        tensors = safetensors_io.load_file(directory / OPTIMIZER_FILE)
    except safetensors_io.SafetensorsError as error:
        raise CheckpointError(f"cannot read {directory / OPTIMIZER_FILE}: {error}") from None
    first, second = {}, {}
    for name, tensor in tensors.items():
        match = MOMENT.match(name)
        if not match:
            raise CheckpointError(f'{OPTIMIZER_FILE}: tensor "{name}" is not an AdamW moment')
        (first if match.group(2) == "exp_avg" else second)[match.group(1)] = tensor.to(torch.float32)
    moments = {}
    for key in first:
        if key not in second:
            raise CheckpointError(f'{OPTIMIZER_FILE}: "{key}.exp_avg" has no "{key}.exp_avg_sq"')
        moments[key] = (first[key], second[key])
    return state, moments


def checkpoint_size(directory: Path) -> int:
    files = [OPTIMIZER_FILE, STATE_FILE, f"{ADAPTER_DIR}/adapter_config.json", f"{ADAPTER_DIR}/adapter_model.safetensors"]
    # With a reasoning vocabulary, its map beside the state and in the adapter.
    maps = [f for f in ("reasoning_token_map.json", f"{ADAPTER_DIR}/reasoning_token_map.json") if (directory / f).exists()]
    return sum((directory / f).stat().st_size for f in files + maps)
