"""LoRA adapters in PEFT's on-disk format (adapter_config.json + adapter_model.safetensors), as
packages/lm writes them: vLLM and PeftModel.from_pretrained load them. Import refuses what the
forward pass does not implement (DoRA, biases, per-layer ranks, modules_to_save), naming the key.

With a reasoning vocabulary the adapter also holds PEFT's trainable tokens (`trainable_token_indices`
and the rows, lora/token_rows.py; PeftModel loads them, vLLM does not) and the directory holds
reasoning_token_map.json; loading it into a model with another map is refused."""
from __future__ import annotations

import json
from pathlib import Path

from .. import safetensors_io
from ..errors import AdapterError
from ..path_root import RootDirectory
from ..model.linear_modules import LINEAR_MODULES
from ..model.model_config import ModelConfig
from .lora_adapter import LoraAdapter
from .lora_config import LoraConfig
from .lora_layout import native_lora_layout
from .token_rows import TokenRows
from ..reasoning.map_file import REASONING_MAP_FILE, check_same_reasoning_map, map_file_bytes
from ..reasoning.token_map import ReasoningVocabError

ADAPTER_CONFIG_FILE = "adapter_config.json"
ADAPTER_WEIGHTS_FILE = "adapter_model.safetensors"


def _js_alpha(value: float):
    return int(value) if float(value).is_integer() else value


def peft_adapter_config(config: LoraConfig, base_model: str, token_rows: TokenRows | None = None) -> dict:
    tokens = {"trainable_token_indices": token_rows.trainable_token_indices()} if token_rows is not None else {}
    return {
        **tokens,
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base_model,
        "r": config.rank,
        "lora_alpha": _js_alpha(config.alpha),
        "lora_dropout": _js_alpha(config.dropout),
        "target_modules": list(config.target_modules),
        "use_rslora": config.use_rslora,
        "use_dora": False,
        "bias": "none",
        "fan_in_fan_out": False,
        "inference_mode": True,
        "modules_to_save": None,
        "layers_to_transform": None,
        "rank_pattern": {},
        "alpha_pattern": {},
    }


def export_peft_files(adapter: LoraAdapter, base_model: str, vocabulary=None) -> dict[str, bytes]:
    """The two files, as bytes (float32 tensors, PEFT key names); with a reasoning vocabulary, its map file too."""
    files = {
        ADAPTER_CONFIG_FILE: json.dumps(peft_adapter_config(adapter.config, base_model, adapter.token_rows), indent=2, ensure_ascii=False).encode("utf-8"),
        ADAPTER_WEIGHTS_FILE: safetensors_io.serialize(adapter.peft_tensors(), {"format": "pt"}),
    }
    if vocabulary is not None:
        files[REASONING_MAP_FILE] = map_file_bytes(vocabulary.map, vocabulary.markers)
    return files


def parse_token_indices(raw) -> tuple[int, int, bool] | None:
    """trainable_token_indices: a list (the input embedding's) or {"embed_tokens": [...], "lm_head": [...]};
    the rows must be consecutive ids. (start, count, whether lm_head has its own), or None when absent."""
    value = raw.get("trainable_token_indices")
    if value is None or value == [] or value == {}:
        return None
    lists = {"embed_tokens": value} if isinstance(value, list) else value
    if not isinstance(lists, dict) or set(lists) - {"embed_tokens", "lm_head"} or "embed_tokens" not in lists:
        _refuse("trainable_token_indices", f'is {json.dumps(value)}; accepted: a list of ids, or {{"embed_tokens": [...]}} (and "lm_head" with the same ids)')
    ids = lists["embed_tokens"]
    ok = isinstance(ids, list) and ids and all(isinstance(i, int) and not isinstance(i, bool) for i in ids)
    if not ok or ids != list(range(ids[0], ids[0] + len(ids))):
        _refuse("trainable_token_indices", "must list consecutive token ids (the reasoning rows n_s .. n_s+n_r-1)")
    if "lm_head" in lists and lists["lm_head"] != ids:
        _refuse("trainable_token_indices", 'has "lm_head" ids that differ from "embed_tokens"; accepted: the same ids')
    return ids[0], len(ids), "lm_head" in lists


def save_peft_files(files: dict[str, bytes], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / name).write_bytes(data)


def _refuse(key: str, message: str):
    raise AdapterError(f'{ADAPTER_CONFIG_FILE} "{key}" {message}')


def parse_peft_config(raw) -> LoraConfig:
    if not isinstance(raw, dict):
        raise AdapterError(f"{ADAPTER_CONFIG_FILE} must be a JSON object")
    if raw.get("peft_type", "LORA") != "LORA":
        _refuse("peft_type", f'is {json.dumps(raw["peft_type"])}; accepted: "LORA"')
    if raw.get("use_dora") is True:
        _refuse("use_dora", "is true; DoRA adapters are not supported")
    if (raw.get("bias") or "none") != "none":
        _refuse("bias", f'is {json.dumps(raw["bias"])}; accepted: "none"')
    if raw.get("fan_in_fan_out") is True:
        _refuse("fan_in_fan_out", "is true; accepted: false (Conv1D layers are not in these models)")
    parse_token_indices(raw)  # checked here; load_peft_adapter matches it against the model
    for key in ("modules_to_save", "layers_to_transform", "rank_pattern", "alpha_pattern"):
        if raw.get(key):
            _refuse(key, f"is {json.dumps(raw[key])}; only empty/null is supported")
    rank = raw.get("r")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank <= 0:
        _refuse("r", f"is {json.dumps(rank)}; it must be a positive integer")
    alpha = raw.get("lora_alpha")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
        _refuse("lora_alpha", f"is {json.dumps(alpha)}; it must be a positive number")
    dropout = raw.get("lora_dropout") or 0
    if not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
        _refuse("lora_dropout", f"is {json.dumps(dropout)}; it must be in [0, 1)")
    use_rslora = raw.get("use_rslora", False)
    if not isinstance(use_rslora, bool):
        _refuse("use_rslora", f"is {json.dumps(use_rslora)}; it must be true or false")
    targets = raw.get("target_modules")
    if targets == "all-linear":  # PEFT's shorthand for every linear layer but the head
        targets = list(LINEAR_MODULES)
    if not isinstance(targets, list) or not targets:
        _refuse(
            "target_modules",
            f"is {json.dumps(targets)}; give a list of module names ({', '.join(LINEAR_MODULES)}) or \"all-linear\" (regular expressions are not supported)",
        )
    for name in targets:
        if not isinstance(name, str) or not name:
            _refuse("target_modules", f"names {json.dumps(name)}; accepted: module names such as {', '.join(LINEAR_MODULES)}")
    # Whether the model has these modules is the layout's check (the native model knows seven).
    return LoraConfig(rank, float(alpha), tuple(targets), float(dropout), use_rslora)


def load_peft_adapter(directory: Path | RootDirectory, model) -> LoraAdapter:
    """Reads an adapter for `model`: anything with lora_layout(LoraConfig) (the native CausalLM, the
    transformers source), or a ModelConfig, which means the native layout. `directory` is a path (a
    model fixture, an operator's file) or a directory opened under a root, read without following symlinks."""

    def read(name: str) -> bytes:
        data = _read_optional(directory, name)
        if data is None:
            raise AdapterError(f"cannot read {_shown(directory, name)}: ENOENT")
        return data

    try:
        raw = json.loads(read(ADAPTER_CONFIG_FILE).decode("utf-8"))
    except json.JSONDecodeError as error:  # its message names a place, not the text there
        raise AdapterError(f"{ADAPTER_CONFIG_FILE} is not valid JSON ({error.msg} at character {error.pos + 1})") from None
    except UnicodeDecodeError:
        raise AdapterError(f"{ADAPTER_CONFIG_FILE} is not valid JSON (not UTF-8)") from None
    config = parse_peft_config(raw)
    try:
        tensors = safetensors_io.load_bytes(read(ADAPTER_WEIGHTS_FILE), ADAPTER_WEIGHTS_FILE)
    except safetensors_io.SafetensorsError as error:
        raise AdapterError(str(error)) from None
    native = isinstance(model, ModelConfig)
    layout = native_lora_layout(model, config) if native else model.lora_layout(config)
    if not native:  # the map first: its message names the settings to change
        _check_reasoning_map(directory, getattr(model, "reasoning_vocabulary", None))
    token_rows = None if native else _adapter_token_rows(raw, model)
    hidden = (model.head.shape[1]) if not native else 0
    return LoraAdapter.from_peft_tensors(layout, config, {k: v.float() for k, v in tensors.items()}, token_rows, hidden)


def _adapter_token_rows(raw: dict, model) -> TokenRows | None:
    """The adapter's trainable token rows, checked against the model's reasoning rows."""
    found = parse_token_indices(raw)
    if found is None:
        return None
    start, count, head = found
    n_s = getattr(model, "reasoning_start", None)
    if n_s is None or (start, start + count) != (n_s, model.config.vocab_size):
        rows = f"{n_s}..{model.config.vocab_size - 1}" if n_s is not None else "none (model.reasoning_vocab_size is 0)"
        raise AdapterError(
            f'{ADAPTER_CONFIG_FILE} "trainable_token_indices" covers ids {start}..{start + count - 1}; this model\'s reasoning rows are {rows} '
            "(set model.reasoning_vocab_size / model.reasoning_map to the adapter's reasoning_token_map.json)"
        )
    untied = bool(model.untied_head) if hasattr(model, "untied_head") else model.head is not model.weights["model.embed_tokens.weight"]
    if head != untied:
        shape = "untied" if untied else "tied to the embedding"
        raise AdapterError(f'{ADAPTER_CONFIG_FILE} "trainable_token_indices" {"has" if head else "lacks"} "lm_head" rows, but this model\'s head is {shape}')
    return TokenRows(start, count, untied)


def _check_reasoning_map(directory: Path | RootDirectory, vocabulary) -> None:
    data = _read_optional(directory, REASONING_MAP_FILE)
    try:
        text = None if data is None else data.decode("utf-8")
        check_same_reasoning_map(text, vocabulary.map if vocabulary is not None else None, f"adapter {_shown(directory, '')}")
    except UnicodeDecodeError:
        raise AdapterError(f"{REASONING_MAP_FILE} is not UTF-8") from None
    except ReasoningVocabError as error:
        raise AdapterError(str(error)) from None


def _read_optional(directory: Path | RootDirectory, name: str) -> bytes | None:
    """A file of the adapter directory, or None when it is not there."""
    if isinstance(directory, RootDirectory):
        return directory.read_optional(name)
    try:
        return (directory / name).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        code = {20: "ENOTDIR", 13: "EACCES", 21: "EISDIR"}.get(error.errno, error.strerror)
        raise AdapterError(f"cannot read {directory / name}: {code}") from None


def _shown(directory: Path | RootDirectory, name: str) -> str:
    """How messages name a file of the directory: relative to the root when it is under one."""
    if isinstance(directory, RootDirectory):
        return "/".join(part for part in (directory.relative, name) if part)
    return str(directory / name)
