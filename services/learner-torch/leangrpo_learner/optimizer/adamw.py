"""torch.optim.AdamW over the adapter's parameters, with its state exposed by PEFT key in the TS
learner's checkpoint layout (moments of A as [in, r], of B as [r, out]: PEFT's transposes), so a
checkpoint written by either learner resumes on the other. Reasoning token rows keep PEFT's own
[rows, hidden] layout (the TS learner holds them that way too).

`fused` (CUDA, torch >= 2.0): torch's one-kernel AdamW instead of a loop of small kernels per
tensor; the same update up to float32 rounding."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..lora.lora_adapter import LoraAdapter
from ..lora.token_rows import is_token_rows_key


def _layout(key: str, t: torch.Tensor) -> torch.Tensor:
    """A parameter-shaped tensor in the checkpoint's layout, and back (the layout is its own inverse)."""
    return t if is_token_rows_key(key) else t.t()


@dataclass(frozen=True)
class AdamWSettings:
    learning_rate: float
    beta1: float
    beta2: float
    epsilon: float
    weight_decay: float


class AdamW:
    def __init__(self, adapter: LoraAdapter, settings: AdamWSettings, fused: bool = False):
        self.adapter = adapter
        self.settings = settings
        self.updates = 0
        self.fused = fused
        self.optimizer = torch.optim.AdamW(
            list(adapter.parameters()),
            lr=settings.learning_rate,
            betas=(settings.beta1, settings.beta2),
            eps=settings.epsilon,
            weight_decay=settings.weight_decay,
            **({"fused": True} if fused else {}),
        )

    def apply(self, learning_rate: float) -> None:
        """One update from the parameters' .grad with this learning rate."""
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate
        self.optimizer.step()
        self.updates += 1

    def moments(self) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """PEFT key -> (exp_avg, exp_avg_sq) in the checkpoint layout; tensors never updated are absent."""
        out = {}
        for key, p in self.adapter.named_tensors().items():
            state = self.optimizer.state.get(p)
            if state and "exp_avg" in state:
                out[key] = (
                    _layout(key, state["exp_avg"].detach()).to("cpu", torch.float32).contiguous(),
                    _layout(key, state["exp_avg_sq"].detach()).to("cpu", torch.float32).contiguous(),
                )
        return out

    def restore(self, updates: int, moments: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> None:
        tensors = self.adapter.named_tensors()
        for key in moments:
            if key not in tensors:
                raise ValueError(f'optimizer state holds "{key}", which the adapter lacks')
        self.updates = updates
        self.optimizer.state.clear()
        for key, (m, v) in moments.items():
            p = tensors[key]
            if list(_layout(key, m).shape) != list(p.shape) or list(_layout(key, v).shape) != list(p.shape):
                raise ValueError(f'optimizer moment "{key}" has shape {list(m.shape)}; the adapter needs {list(_layout(key, p).shape)}')
            self.optimizer.state[p] = {
                # The fused kernel reads the step count on the parameter's device.
                "step": torch.tensor(float(updates), dtype=torch.float32, device=p.device if self.fused else "cpu"),
                "exp_avg": _layout(key, m).contiguous().to(p.device, p.dtype),
                "exp_avg_sq": _layout(key, v).contiguous().to(p.device, p.dtype),
            }
