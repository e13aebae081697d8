"""The reasoning mask: which ids may come next, as a function of the completion's ids alone
(docs/concepts/reasoning-vocabulary.md, "The block and the mask"; the same rules as
packages/lm/src/reasoning-vocab/reasoning-mask.ts). The block state is advanced on source ids (a
marker written with reasoning copies counts) by matching the markers' id sequences: no text is
decoded, so it costs O(marker length) per token. Pure Python: the vLLM logits processor and the
learner share it."""
from __future__ import annotations

from .token_map import ReasoningTokenMap

MASK_MODES = ("free", "gated", "strict")
BEFORE, INSIDE, AFTER = "before", "inside", "after"
# ReasoningMask in proto/leangrpo/v1/common.proto; UNSPECIFIED (0, None here) means the service's
# own model.reasoning_mask.
MASK_OF_PROTO = {0: None, 1: "free", 2: "gated", 3: "strict"}


class BlockTracker:
    """Follows one completion's block state token by token: `state` decides the next token's mask."""

    def __init__(self, token_map: ReasoningTokenMap, start_ids, end_ids):
        self.token_map = token_map
        self.start_ids = tuple(start_ids)
        self.end_ids = tuple(end_ids)
        self.state = BEFORE
        self._recent: list[int] = []
        self._keep = max(len(self.start_ids), len(self.end_ids))
        self._inside_count = 0  # tokens since the block opened: the end marker must lie wholly after the start marker

    def push(self, token: int) -> str:
        self._recent.append(self.token_map.source(token))
        if len(self._recent) > self._keep:
            del self._recent[0]
        if self.state == BEFORE and _ends_with(self._recent, self.start_ids):
            self.state = INSIDE
            self._inside_count = 0
        elif self.state == INSIDE:
            self._inside_count += 1
            if self._inside_count >= len(self.end_ids) and _ends_with(self._recent, self.end_ids):
                self.state = AFTER  # for good: a second start marker opens nothing
        return self.state


def _ends_with(values: list[int], suffix: tuple[int, ...]) -> bool:
    return len(suffix) <= len(values) and tuple(values[len(values) - len(suffix) :]) == suffix


def block_states(completion_ids, token_map: ReasoningTokenMap, start_ids, end_ids) -> list[str]:
    """The block state each completion token was sampled in (the state before token t, for every t)."""
    tracker = BlockTracker(token_map, start_ids, end_ids)
    states = []
    for token in completion_ids:
        states.append(tracker.state)
        tracker.push(token)
    return states


def restricts(state: str, mode: str) -> bool:
    """True when `mode` excludes any id in `state` (free never does)."""
    return mode == "strict" or (mode == "gated" and state != INSIDE)


def is_allowed(token: int, state: str, mode: str, standard_size: int, end_ids) -> bool:
    """Whether `token` may be sampled in `state` under `mode`."""
    if mode == "free":
        return True
    reasoning = token >= standard_size
    if state != INSIDE:
        return not reasoning
    if mode == "gated":
        return True
    return reasoning or token in end_ids


def allowed_ranges(state: str, mode: str, standard_size: int, total_size: int, end_ids) -> list[tuple[int, int]] | None:
    """The allowed ids as [start, end) ranges, or None when nothing is excluded: what a logits
    processor turns into a mask without looping over the vocabulary."""
    if not restricts(state, mode):
        return None
    if state != INSIDE:
        return [(0, standard_size)]
    return [(i, i + 1) for i in sorted(set(end_ids))] + [(standard_size, total_size)]
