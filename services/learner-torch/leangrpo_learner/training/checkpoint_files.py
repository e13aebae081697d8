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

import torch

from ..artifact_names import CHECKPOINT_ADAPTER_DIR
from .. import safetensors_io
from ..errors import CheckpointError
from ..path_root import PathError, RootDirectory

ADAPTER_DIR = CHECKPOINT_ADAPTER_DIR
OPTIMIZER_FILE = "optimizer.safetensors"
STATE_FILE = "trainer_state.json"
FORMAT_VERSION = 1
MAX_STATE_BYTES = 1 << 20  # trainer_state.json is a few hundred bytes; anything near this is not one
MOMENT = re.compile(r"^(.*)\.(exp_avg|exp_avg_sq)$")


@dataclass
class TrainerState:
    step: int
    adapter_version: int
    algorithm: str
    optimizer_updates: int
    seed: int
    base_model: str


def checkpoint_state_files(state: TrainerState, moments: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> dict[str, bytes]:
    """optimizer.safetensors and trainer_state.json of a checkpoint, by file name."""
    tensors = {}
    for key, (m, v) in moments.items():
        tensors[f"{key}.exp_avg"] = m
        tensors[f"{key}.exp_avg_sq"] = v
    doc = {
        "format_version": FORMAT_VERSION,
        "step": state.step,
        "adapter_version": state.adapter_version,
        "algorithm": state.algorithm,
        "optimizer_updates": state.optimizer_updates,
        "seed": state.seed,
        "base_model": state.base_model,
    }
    return {OPTIMIZER_FILE: safetensors_io.serialize(tensors, {"format": "pt"}), STATE_FILE: json.dumps(doc, indent=2).encode("utf-8")}


def _field(doc: dict, key: str, file: str) -> int:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        # The value is not quoted: what a file holds is not the client's to read.
        raise CheckpointError(f'{file}: "{key}" must be a non-negative integer')
    return value


def read_checkpoint_state(directory: RootDirectory) -> tuple[TrainerState, dict[str, tuple[torch.Tensor, torch.Tensor]]]:
    file = STATE_FILE
    try:
        data = directory.read_bytes(STATE_FILE, MAX_STATE_BYTES)
    except PathError as error:  # a symlink or a FIFO in its place is refused as the path error it is
        if error.code != "missing":
            raise
        raise CheckpointError(f"cannot read {STATE_FILE}: ENOENT; is it a directory written by SaveCheckpoint?") from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        # Not the parser's message: what a file holds is not the client's to read.
        raise CheckpointError(f"{STATE_FILE} is not valid JSON; is it a directory written by SaveCheckpoint?") from None
    if not isinstance(doc, dict):
        raise CheckpointError(f"{STATE_FILE} is not a JSON object; is it a directory written by SaveCheckpoint?")
    if doc.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{file}: its format_version is not supported; accepted: {FORMAT_VERSION}")
    state = TrainerState(
        step=_field(doc, "step", file),
        adapter_version=_field(doc, "adapter_version", file),
        algorithm=doc["algorithm"] if isinstance(doc.get("algorithm"), str) else "",
        optimizer_updates=_field(doc, "optimizer_updates", file),
        seed=_field(doc, "seed", file),
        base_model=doc["base_model"] if isinstance(doc.get("base_model"), str) else "",
    )
    optimizer = directory.read_optional(OPTIMIZER_FILE)
    if optimizer is None:
        raise CheckpointError(f"cannot read {OPTIMIZER_FILE}: ENOENT; is it a directory written by SaveCheckpoint?")
    try:
        tensors = safetensors_io.load_bytes(optimizer, OPTIMIZER_FILE)
    except safetensors_io.SafetensorsError as error:
        raise CheckpointError(f"cannot read {OPTIMIZER_FILE}: {error}") from None
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
