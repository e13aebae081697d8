"""LoRA adapters in PEFT's on-disk format (adapter_config.json + adapter_model.safetensors), as
packages/lm writes them: vLLM and PeftModel.from_pretrained load them. Import refuses what the
forward pass does not implement (DoRA, biases, per-layer ranks, modules_to_save), naming the key."""
from __future__ import annotations

import json
from pathlib import Path

from .. import safetensors_io
from ..errors import AdapterError
from ..model.linear_modules import LINEAR_MODULES
from ..model.model_config import ModelConfig
from .lora_adapter import LoraAdapter
from .lora_config import LoraConfig
from .lora_layout import native_lora_layout

ADAPTER_CONFIG_FILE = "adapter_config.json"
ADAPTER_WEIGHTS_FILE = "adapter_model.safetensors"


def _js_alpha(value: float):
    return int(value) if float(value).is_integer() else value


def peft_adapter_config(config: LoraConfig, base_model: str) -> dict:
    return {
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


def export_peft_files(adapter: LoraAdapter, base_model: str) -> dict[str, bytes]:
    """The two files, as bytes (float32 tensors, PEFT key names)."""
    return {
        ADAPTER_CONFIG_FILE: json.dumps(peft_adapter_config(adapter.config, base_model), indent=2, ensure_ascii=False).encode("utf-8"),
        ADAPTER_WEIGHTS_FILE: safetensors_io.serialize(adapter.peft_tensors(), {"format": "pt"}),
    }


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


def load_peft_adapter(directory: Path, model) -> LoraAdapter:
    """Reads an adapter for `model`: anything with lora_layout(LoraConfig) (the native CausalLM, the
    transformers source), or a ModelConfig, which means the native layout."""

    def read(name: str) -> bytes:
        try:
            return (directory / name).read_bytes()
        except OSError as error:
            code = {2: "ENOENT", 20: "ENOTDIR", 13: "EACCES"}.get(error.errno, error.strerror)
            raise AdapterError(f"cannot read {directory / name}: {code}") from None

    try:
        raw = json.loads(read(ADAPTER_CONFIG_FILE).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise AdapterError(f"{ADAPTER_CONFIG_FILE} is not valid JSON ({error})") from None
    config = parse_peft_config(raw)
    try:
        tensors = safetensors_io.load_bytes(read(ADAPTER_WEIGHTS_FILE), ADAPTER_WEIGHTS_FILE)
    except safetensors_io.SafetensorsError as error:
        raise AdapterError(str(error)) from None
    layout = native_lora_layout(model, config) if isinstance(model, ModelConfig) else model.lora_layout(config)
    return LoraAdapter.from_peft_tensors(layout, config, {k: v.float() for k, v in tensors.items()})
