"""The reasoning mask inside vLLM: a custom logits processor for `gated` and `strict`
(docs/concepts/reasoning-vocabulary.md). `free` needs none: an expanded base checkpoint samples
over both halves as it is.

    PYTHONPATH=services/learner-torch vllm serve /models/expanded \\
        --logits-processors leangrpo_learner.reasoning.vllm_logits_processor:ReasoningMaskLogitsProcessor

Written against vLLM's V1 logits-processor interface (vllm/v1/sample/logits_processor/interface.py:
`LogitsProcessor` with `validate_params`, `__init__(vllm_config, device, is_pin_memory)`,
`update_state(BatchUpdate | None)`, `apply(logits)`, `is_argmax_invariant()`; docs:
https://docs.vllm.ai/en/stable/features/custom_logitsprocs/). vLLM applies such processors to the
raw logits before temperature, top-k and top-p, which is where the definition puts the mask. vLLM
0.32's Model Runner V2 has another interface; run it with VLLM_USE_V2_MODEL_RUNNER=0. Custom
processors are refused with speculative decoding.

A request picks its mode with `vllm_xargs: {"reasoning_mask": "gated"}` (SamplingParams.extra_args);
without it the request is `free`. The map and the markers' ids come from the served directory's
reasoning_token_map.json (expand_checkpoint.py writes it), so no tokenizer is involved. Each row's
block state is advanced on its new output ids only (O(marker length) per token), never by decoding.

The bookkeeping (`ReasoningMaskRows`) and the mask (`mask_rows`) import neither vLLM nor its
config, so they are tested without vLLM (tests/test_reasoning_vllm.py).
"""
from __future__ import annotations

from pathlib import Path

import torch

from .block_mask import INSIDE, MASK_MODES, BlockTracker, restricts
from .map_file import read_reasoning_map_file

try:  # only inside vLLM
    from vllm.v1.sample.logits_processor import LogitsProcessor as _VllmLogitsProcessor
except ImportError:  # the pure parts stay importable (and testable) without vLLM
    _VllmLogitsProcessor = object

EXTRA_ARG = "reasoning_mask"


def requested_mode(extra_args) -> str:
    """A request's mask mode from SamplingParams.extra_args; ValueError names the argument."""
    mode = (extra_args or {}).get(EXTRA_ARG, "free")
    if mode not in MASK_MODES:
        raise ValueError(f'vllm_xargs "{EXTRA_ARG}" is {mode!r}; accepted: {", ".join(MASK_MODES)}')
    return mode


class _Row:
    def __init__(self, mode: str, output_ids: list[int], tracker: BlockTracker):
        self.mode = mode
        self.output_ids = output_ids  # vLLM's live list of the request's generated ids
        self.tracker = tracker
        self.seen = 0

    def advance(self) -> str:
        while self.seen < len(self.output_ids):
            self.tracker.push(self.output_ids[self.seen])
            self.seen += 1
        return self.tracker.state


class ReasoningMaskRows:
    """Per batch row: the request's mode and its block tracker, kept in step with vLLM's
    persistent batch (removed, then added, then moved, as BatchUpdate prescribes)."""

    def __init__(self, token_map, start_ids, end_ids):
        self.token_map = token_map
        self.start_ids = tuple(start_ids)
        self.end_ids = tuple(end_ids)
        self.rows: dict[int, _Row] = {}

    def update(self, removed, added, moved) -> None:
        for index in removed:
            self.rows.pop(index, None)
        for entry in added:
            # (index, params, prompt ids, output ids); vLLM before the prompt ids were added sent three.
            index, params, output_ids = entry[0], entry[1], entry[-1]
            mode = requested_mode(getattr(params, "extra_args", None))
            if mode == "free":
                self.rows.pop(index, None)  # an added request may replace the one at its index
            else:
                self.rows[index] = _Row(mode, output_ids, BlockTracker(self.token_map, self.start_ids, self.end_ids))
        for first, second, direction in moved:
            a, b = self.rows.pop(first, None), self.rows.pop(second, None)
            if a is not None:
                self.rows[second] = a
            if getattr(direction, "name", direction) == "SWAP" and b is not None:
                self.rows[first] = b

    def restricted(self) -> list[tuple[int, str, str]]:
        """(row, state, mode) of every row whose next token the mask restricts."""
        out = []
        for index, row in self.rows.items():
            state = row.advance()
            if restricts(state, row.mode):
                out.append((index, state, row.mode))
        return out


def mask_rows(logits: torch.Tensor, restricted, standard_size: int, end_ids) -> torch.Tensor:
    """Excluded ids of each restricted row to −∞, in place: outside the block the reasoning half;
    strict inside it the standard half but the end marker's ids."""
    end = list(end_ids)
    for index, state, _mode in restricted:
        row = logits[index]
        if state != INSIDE:
            row[standard_size:] = float("-inf")
        else:
            keep = row[end].clone()
            row[:standard_size] = float("-inf")
            row[end] = keep
    return logits


class ReasoningMaskLogitsProcessor(_VllmLogitsProcessor):
    @classmethod
    def validate_params(cls, sampling_params) -> None:
        requested_mode(getattr(sampling_params, "extra_args", None))

    def __init__(self, vllm_config, device: torch.device, is_pin_memory: bool):
        directory = Path(vllm_config.model_config.model)
        saved = read_reasoning_map_file(directory, "the served model's reasoning_token_map.json")
        if saved.markers is None:
            raise ValueError(f"{directory}/reasoning_token_map.json records no markers; write it with expand_checkpoint.py")
        self.standard_size = saved.map.standard_size
        self.end_ids = saved.markers.end_ids
        self.rows = ReasoningMaskRows(saved.map, saved.markers.start_ids, saved.markers.end_ids)

    def is_argmax_invariant(self) -> bool:
        return False  # it changes which id is the most likely

    def update_state(self, batch_update) -> None:
        if batch_update is not None:
            self.rows.update(batch_update.removed, batch_update.added, batch_update.moved)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        restricted = self.rows.restricted()
        return mask_rows(logits, restricted, self.standard_size, self.end_ids) if restricted else logits
