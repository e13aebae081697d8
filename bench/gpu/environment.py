"""What the check runs on and with: the learner package on sys.path, the device, whether
transformers + peft are importable, and the learner config each part starts from."""
from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LEARNER_ROOT = REPO_ROOT / "services" / "learner-torch"
for path in (LEARNER_ROOT, REPO_ROOT / "scripts" / "reference"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import torch  # noqa: E402

from leangrpo_learner.config import load_config  # noqa: E402
from leangrpo_learner.model.transformers_support import transformers_missing  # noqa: E402

# Every linear layer of the decoder, as the step asks (LoRA r16 on every linear).
ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def device_of(smoke: bool) -> torch.device:
    if smoke:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device; run with --cpu-smoke on a machine without one")
    return torch.device("cuda")


def sources() -> tuple[list[str], str | None]:
    """The model sources that can run here, and why transformers cannot (None when it can)."""
    missing = transformers_missing()
    return (["native"] if missing else ["native", "transformers"]), missing


def learner_config(
    model_dir: Path, source: str, device: torch.device, dtype="auto", rank=16, gradient_checkpointing=False, torch_settings: dict | None = None, **extra
) -> dict:
    given = {
        "model": {"dir": str(model_dir), "name": model_dir.name},
        "lora": {"rank": rank, "alpha": 2 * rank, "target_modules": ALL_LINEAR},
        "optimizer": {"learning_rate": 1e-5},
        "torch": {"device": device.type, "dtype": dtype, "model_source": source, "gradient_checkpointing": gradient_checkpointing, **(torch_settings or {})},
        **extra,
    }
    return load_config(given)


def device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def reset_peak_memory(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)


def peak_memory_gib(device: torch.device) -> float | None:
    if device.type != "cuda":
        return None
    torch.cuda.synchronize(device)
    return round(torch.cuda.max_memory_allocated(device) / 2**30, 2)
