"""The map from reasoning ids to their sources: reasoning id n_s + i copies standard id
source_ids[i]. n_s is the base model's config.json vocab_size (never the tokenizer's size: Qwen
pads its matrix, and the tokenizer's size would shift every reasoning id onto the wrong source).
The hash covers exactly what fixes the ids' meaning: n_s and the sources."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


class ReasoningVocabError(ValueError):
    """A reasoning-vocabulary setting or file that cannot be used; the message names the key or file."""


def reasoning_map_hash(standard_size: int, source_ids) -> str:
    """Lowercase hex SHA-256 of the UTF-8 string "<n_s>:<source ids joined by commas>"."""
    return hashlib.sha256(f"{standard_size}:{','.join(str(int(s)) for s in source_ids)}".encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ReasoningTokenMap:
    standard_size: int  # n_s
    source_ids: tuple[int, ...]  # source_ids[i]: the standard id reasoning id n_s + i copies
    multiplicities: tuple[int, ...] = field(init=False)  # which copy of its source each reasoning id is (1 = the first)
    sha256: str = field(init=False)

    def __post_init__(self):
        if isinstance(self.standard_size, bool) or not isinstance(self.standard_size, int) or self.standard_size < 1:
            raise ReasoningVocabError(f"standard vocabulary size {self.standard_size!r} must be an integer >= 1")
        copies: dict[int, int] = {}
        multiplicities = []
        for i, source in enumerate(self.source_ids):
            if isinstance(source, bool) or not isinstance(source, int) or not 0 <= source < self.standard_size:
                raise ReasoningVocabError(
                    f"model.reasoning_map: source id {source!r} of reasoning id {self.standard_size + i} is not a standard id (0..{self.standard_size - 1})"
                )
            copies[source] = copies.get(source, 0) + 1
            multiplicities.append(copies[source])
        object.__setattr__(self, "source_ids", tuple(self.source_ids))
        object.__setattr__(self, "multiplicities", tuple(multiplicities))
        object.__setattr__(self, "sha256", reasoning_map_hash(self.standard_size, self.source_ids))

    @property
    def reasoning_size(self) -> int:
        """n_r."""
        return len(self.source_ids)

    @property
    def total_size(self) -> int:
        """Rows of the expanded model, n_s + n_r."""
        return self.standard_size + len(self.source_ids)

    def is_reasoning(self, token: int) -> bool:
        return token >= self.standard_size

    def source(self, token: int) -> int:
        """The standard id a token reads as: itself, or the source of a reasoning id."""
        if token < self.standard_size:
            return token
        i = token - self.standard_size
        if i >= len(self.source_ids):
            raise ReasoningVocabError(f"token id {token} is beyond the expanded vocabulary ({self.total_size} ids)")
        return self.source_ids[i]

    def copies_of(self, standard_id: int) -> int:
        """Number of reasoning copies of a standard id (0 when it has none)."""
        return sum(1 for s in self.source_ids if s == standard_id)


def default_reasoning_map(standard_size: int, reasoning_size: int, key: str = "model.reasoning_vocab_size") -> ReasoningTokenMap:
    """Reasoning id n_s + i copies standard id i, for i < n_r (n_r <= n_s)."""
    if isinstance(reasoning_size, bool) or not isinstance(reasoning_size, int) or reasoning_size < 1:
        raise ReasoningVocabError(f"{key} {reasoning_size!r} must be an integer >= 1")
    if reasoning_size > standard_size:
        raise ReasoningVocabError(
            f"{key} {reasoning_size} is larger than the model's standard vocabulary (config.json vocab_size {standard_size}); "
            f"the default map copies ids 0..n_r-1 once, so n_r <= {standard_size}. For several copies of a token, give model.reasoning_map"
        )
    return ReasoningTokenMap(standard_size, tuple(range(reasoning_size)))
