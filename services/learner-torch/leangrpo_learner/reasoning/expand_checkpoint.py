"""Writes an expanded base checkpoint that vLLM (or transformers) serves as it is: weights with
n_s + n_r rows (row n_s + i a copy of map[i], or a trained adapter's rows), config.json with the
new vocab_size, a tokenizer with a placeholder token for every id it lacks (vLLM's detokenizer
fails on ids beyond its tokenizer), and reasoning_token_map.json with the markers' ids (what the
project's vLLM logits processor reads).

    python -m leangrpo_learner.reasoning.expand_checkpoint --model /models/Qwen2.5-0.5B --out /models/q05-r \\
        --reasoning-vocab-size 151936 [--markers "<think>" "</think>"]
    # trained rows: a learner adapter's trainable tokens written into the base; its LoRA apart
    python -m leangrpo_learner.reasoning.expand_checkpoint --model /models/q05-r --out /models/q05-r-step40 \\
        --adapter checkpoints/step-40/adapter --lora-out adapters/step-40-lora

vLLM loads neither PEFT trainable tokens nor modules_to_save from a LoRA adapter, so trained rows
reach it by reloading such a checkpoint; the LoRA-only adapter (--lora-out) still hot-loads.
Tensor dtypes and the shard layout are kept."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import torch

from .. import safetensors_io
from ..lora.token_rows import EMBEDDING_ROWS_KEY, HEAD_ROWS_KEY, TOKEN_ROWS_KEYS
from .map_file import REASONING_MAP_FILE, map_file_bytes, read_reasoning_map_file
from .token_map import ReasoningVocabError
from .vocabulary import DEFAULT_MARKERS, ReasoningSettings, resolve_reasoning_vocabulary

EMBEDDING, HEAD = "model.embed_tokens.weight", "lm_head.weight"
WEIGHT_INDEX = "model.safetensors.index.json"


def _weight_files(directory: Path) -> list[str]:
    index = directory / WEIGHT_INDEX
    if index.exists():
        return sorted(set(json.loads(index.read_text("utf-8"))["weight_map"].values()))
    return ["model.safetensors"]


def _rows(matrix: torch.Tensor, token_map, trained: torch.Tensor | None) -> torch.Tensor:
    if matrix.shape[0] == token_map.total_size:  # already expanded: only trained rows change it
        base = matrix[: token_map.standard_size]
    elif matrix.shape[0] == token_map.standard_size:
        base = matrix
    else:
        raise ReasoningVocabError(f"a token matrix has {matrix.shape[0]} rows; the reasoning map needs {token_map.standard_size} (or {token_map.total_size})")
    new = trained.to(matrix.dtype) if trained is not None else base.index_select(0, torch.tensor(token_map.source_ids, dtype=torch.long))
    return torch.cat([base, new], dim=0)


def placeholder_tokens(tokenizer: dict, total: int, standard_size: int) -> list[dict]:
    """Added-token entries for every id below `total` that tokenizer.json does not have."""
    known = set(tokenizer.get("model", {}).get("vocab", {}).values()) | {t["id"] for t in tokenizer.get("added_tokens") or []}
    out = []
    for token_id in range(total):
        if token_id in known:
            continue
        content = f"<|reasoning_{token_id - standard_size}|>" if token_id >= standard_size else f"<|unused_{token_id}|>"
        out.append({"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True})
    return out


def _write_tokenizer(source: Path, target: Path, total: int, standard_size: int) -> None:
    path = source / "tokenizer.json"
    if not path.exists():
        return
    tokenizer = json.loads(path.read_text("utf-8"))
    added = placeholder_tokens(tokenizer, total, standard_size)
    tokenizer["added_tokens"] = list(tokenizer.get("added_tokens") or []) + added
    (target / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), "utf-8")
    config_path = source / "tokenizer_config.json"
    if config_path.exists():
        config = json.loads(config_path.read_text("utf-8"))
        if isinstance(config.get("added_tokens_decoder"), dict):
            for token in added:
                config["added_tokens_decoder"][str(token["id"])] = {k: v for k, v in token.items() if k != "id"}
        (target / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False), "utf-8")


def _adapter_rows(adapter: Path | None, token_map) -> dict[str, torch.Tensor]:
    if adapter is None:
        return {}
    text = (adapter / REASONING_MAP_FILE).read_text("utf-8") if (adapter / REASONING_MAP_FILE).exists() else None
    from .map_file import check_same_reasoning_map

    check_same_reasoning_map(text, token_map, f"adapter {adapter}")
    tensors = safetensors_io.load_file(adapter / "adapter_model.safetensors")
    rows = {k: v for k, v in tensors.items() if k in TOKEN_ROWS_KEYS}
    if EMBEDDING_ROWS_KEY not in rows:
        raise ReasoningVocabError(f"adapter {adapter} has no trained reasoning rows ({EMBEDDING_ROWS_KEY}); nothing to write into the base")
    for key, value in rows.items():
        if value.shape[0] != token_map.reasoning_size:
            raise ReasoningVocabError(f"adapter {adapter}: {key} has {value.shape[0]} rows; the map has {token_map.reasoning_size}")
    return rows


def write_lora_only(adapter: Path, out: Path, base_model: str) -> None:
    """The adapter without its trainable tokens: the part vLLM hot-loads."""
    out.mkdir(parents=True, exist_ok=True)
    config = json.loads((adapter / "adapter_config.json").read_text("utf-8"))
    config.pop("trainable_token_indices", None)
    config["base_model_name_or_path"] = base_model
    (out / "adapter_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False), "utf-8")
    tensors = {k: v for k, v in safetensors_io.load_file(adapter / "adapter_model.safetensors").items() if k not in TOKEN_ROWS_KEYS}
    (out / "adapter_model.safetensors").write_bytes(safetensors_io.serialize(tensors, {"format": "pt"}))
    if (adapter / REASONING_MAP_FILE).exists():
        shutil.copyfile(adapter / REASONING_MAP_FILE, out / REASONING_MAP_FILE)


def expand_checkpoint(model: Path, out: Path, settings: ReasoningSettings, adapter: Path | None = None, lora_out: Path | None = None):
    """Writes the expanded checkpoint; returns its vocabulary."""
    config = json.loads((model / "config.json").read_text("utf-8"))
    saved = read_reasoning_map_file(model) if (model / REASONING_MAP_FILE).exists() else None
    standard_size = saved.map.standard_size if saved is not None else int(config["vocab_size"])
    vocabulary = resolve_reasoning_vocabulary(settings, standard_size, model, prefix="--")
    if vocabulary is None:
        raise ReasoningVocabError("give --reasoning-vocab-size > 0 or --reasoning-map")
    token_map = vocabulary.map
    if saved is not None and saved.map.sha256 != token_map.sha256:
        raise ReasoningVocabError(f"{model} is already expanded with another reasoning map (sha256 {saved.map.sha256[:12]}…)")
    trained = _adapter_rows(adapter, token_map)
    out.mkdir(parents=True, exist_ok=True)
    for entry in model.iterdir():  # tokenizer files, generation config, chat template...
        if entry.is_file() and not entry.name.endswith(".safetensors") and entry.name not in ("config.json", WEIGHT_INDEX, "tokenizer.json"):
            shutil.copyfile(entry, out / entry.name)
    total_bytes = 0
    for name in _weight_files(model):
        tensors = safetensors_io.load_file(model / name)
        if EMBEDDING in tensors:
            tensors[EMBEDDING] = _rows(tensors[EMBEDDING], token_map, trained.get(EMBEDDING_ROWS_KEY))
        if HEAD in tensors:
            tied = config.get("tie_word_embeddings", False)
            tensors[HEAD] = _rows(tensors[HEAD], token_map, trained.get(EMBEDDING_ROWS_KEY if tied else HEAD_ROWS_KEY))
        data = safetensors_io.serialize(tensors, {"format": "pt"})
        total_bytes += sum(t.numel() * t.element_size() for t in tensors.values())
        (out / name).write_bytes(data)
    if (model / WEIGHT_INDEX).exists():
        index = json.loads((model / WEIGHT_INDEX).read_text("utf-8"))
        index.setdefault("metadata", {})["total_size"] = total_bytes
        (out / WEIGHT_INDEX).write_text(json.dumps(index, indent=2), "utf-8")
    config["vocab_size"] = token_map.total_size
    (out / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False), "utf-8")
    _write_tokenizer(model, out, token_map.total_size, token_map.standard_size)
    (out / REASONING_MAP_FILE).write_bytes(map_file_bytes(token_map, vocabulary.markers))
    if lora_out is not None:
        if adapter is None:
            raise ReasoningVocabError("--lora-out needs --adapter")
        write_lora_only(adapter, lora_out, str(out))
    return vocabulary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="expand_checkpoint", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, type=Path, help="a Hugging Face model directory (base, or already expanded)")
    parser.add_argument("--out", required=True, type=Path, help="where to write the expanded checkpoint")
    parser.add_argument("--reasoning-vocab-size", type=int, default=0, help="n_r (default map: ids 0..n_r-1)")
    parser.add_argument("--reasoning-map", help="a reasoning_token_map.json (any source ids)")
    parser.add_argument("--markers", nargs=2, default=list(DEFAULT_MARKERS), metavar=("START", "END"))
    parser.add_argument("--adapter", type=Path, help="a learner adapter whose trained reasoning rows go into the weights")
    parser.add_argument("--lora-out", type=Path, help="with --adapter: write its LoRA part (no token rows) here, for vLLM")
    args = parser.parse_args(argv)
    model = args.model
    map_file = args.reasoning_map or (str(model / REASONING_MAP_FILE) if (model / REASONING_MAP_FILE).exists() and not args.reasoning_vocab_size else None)
    try:
        vocabulary = expand_checkpoint(
            model, args.out, ReasoningSettings(args.reasoning_vocab_size, tuple(args.markers), "free", map_file), args.adapter, args.lora_out
        )
    except (ReasoningVocabError, OSError, KeyError, ValueError) as error:
        print(f"expand_checkpoint: {error}", file=sys.stderr)
        return 2
    print(json.dumps({"out": str(args.out), **vocabulary.describe()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
