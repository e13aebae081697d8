"""The reasoning rows an adapter trains, as PEFT's trainable tokens (LoraConfig
trainable_token_indices): ids [start, vocab) of the embedding, and of an untied head. PEFT saves
the rows' values (not differences: its layer writes them over the base rows with index_copy) under
the keys below, [rows, hidden]; a tied model saves only the embedding's and PEFT ties the head's
adapter to it (peft/tuners/trainable_tokens/layer.py)."""
from __future__ import annotations

from dataclasses import dataclass

EMBEDDING_ROWS_KEY = "base_model.model.model.embed_tokens.token_adapter.trainable_tokens_delta"
HEAD_ROWS_KEY = "base_model.model.lm_head.token_adapter.trainable_tokens_delta"
TOKEN_ROWS_KEYS = (EMBEDDING_ROWS_KEY, HEAD_ROWS_KEY)


@dataclass(frozen=True)
class TokenRows:
    """Which rows an adapter trains: ids start .. start + count - 1, and whether the head has its own."""

    start: int
    count: int
    untied_head: bool

    @property
    def keys(self) -> tuple[str, ...]:
        return TOKEN_ROWS_KEYS if self.untied_head else (EMBEDDING_ROWS_KEY,)

    def trainable_token_indices(self) -> dict[str, list[int]]:
        """adapter_config.json's trainable_token_indices (the dict form, as packages/lm writes it)."""
        ids = list(range(self.start, self.start + self.count))
        return {"embed_tokens": ids, "lm_head": ids} if self.untied_head else {"embed_tokens": ids}


def is_token_rows_key(key: str) -> bool:
    return key in TOKEN_ROWS_KEYS
