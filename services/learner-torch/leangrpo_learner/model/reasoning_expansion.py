"""Expansion of a loaded model to n_s + n_r rows (docs/concepts/reasoning-vocabulary.md): the
embedding (and an untied head) gains one row per reasoning id, an exact copy of its source's row,
so at initialisation the expanded model says exactly what the base says (logits of a copy equal
its source's). Tied models stay tied: one matrix serves both. Done after the weights are loaded
(expanding inside from_pretrained, on meta tensors, is what broke the anchor implementation).

The base keeps the copies frozen; an adapter with token rows (lora/token_rows.py) carries the
trained values, and `embedding_for` / `head_for` put them in place for a pass with that adapter.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..errors import ModelError
from ..lora.token_rows import EMBEDDING_ROWS_KEY, HEAD_ROWS_KEY, TokenRows
from ..reasoning.token_map import ReasoningTokenMap


def with_copied_rows(matrix: torch.Tensor, token_map: ReasoningTokenMap) -> torch.Tensor:
    """[n_s, hidden] -> [n_s + n_r, hidden]: row n_s + i is a copy of row map[i]."""
    if matrix.shape[0] != token_map.standard_size:
        raise ModelError(f"the model has {matrix.shape[0]} token rows, but the reasoning map is for n_s = {token_map.standard_size} (config.json vocab_size)")
    sources = torch.tensor(token_map.source_ids, dtype=torch.long, device=matrix.device)
    return torch.cat([matrix, matrix.index_select(0, sources)], dim=0)


def expand_native(model, token_map: ReasoningTokenMap) -> None:
    """Expands a native CausalLM in place (an expanded base, already n_s + n_r rows, stays as it is)."""
    if model.config.vocab_size == token_map.total_size:
        model.reasoning_start = token_map.standard_size
        return
    embedding = with_copied_rows(model.weights["model.embed_tokens.weight"], token_map)
    model.weights["model.embed_tokens.weight"] = embedding
    if model.config.tie_word_embeddings:
        model.head = embedding
    else:
        model.head = model.weights["lm_head.weight"] = with_copied_rows(model.weights["lm_head.weight"], token_map)
    model.config = dataclasses.replace(model.config, vocab_size=token_map.total_size)
    model.reasoning_start = token_map.standard_size


def expand_hf(hf_model, token_map: ReasoningTokenMap) -> None:
    """Expands a transformers causal LM in place (before peft wraps it): resize_token_embeddings, then copies."""
    embeddings = hf_model.get_input_embeddings()
    if embeddings.weight.shape[0] == token_map.total_size:  # an expanded base
        return
    head = hf_model.get_output_embeddings()
    tied = head is not None and head.weight is embeddings.weight
    base_embedding = embeddings.weight.detach().clone()
    base_head = None if tied or head is None else head.weight.detach().clone()
    try:
        hf_model.resize_token_embeddings(token_map.total_size, mean_resizing=False)
    except TypeError:  # transformers < 4.46 has no mean_resizing; the new rows are overwritten below anyway
        hf_model.resize_token_embeddings(token_map.total_size)
    with torch.no_grad():
        hf_model.get_input_embeddings().weight.copy_(with_copied_rows(base_embedding, token_map))
        if base_head is not None:
            hf_model.get_output_embeddings().weight.copy_(with_copied_rows(base_head, token_map))
    new_head = hf_model.get_output_embeddings()
    if tied and new_head is not None and new_head.weight is not hf_model.get_input_embeddings().weight:
        raise ModelError("resizing the vocabulary untied the model's embedding and head; this learner cannot keep them tied")


def token_rows_of(model) -> TokenRows | None:
    """The rows an adapter of this (expanded) model trains, or None when it has no reasoning rows."""
    start = getattr(model, "reasoning_start", None)
    if start is None:
        return None
    untied = model.untied_head if hasattr(model, "untied_head") else model.head is not model.weights["model.embed_tokens.weight"]
    return TokenRows(start, model.config.vocab_size - start, bool(untied))


def initial_rows(model, rows: TokenRows) -> dict[str, torch.Tensor]:
    """The adapter's starting values of the rows: the base's copies, float32 on the CPU."""
    embedding = model.input_embedding_matrix() if hasattr(model, "input_embedding_matrix") else model.weights["model.embed_tokens.weight"]
    out = {EMBEDDING_ROWS_KEY: embedding[rows.start :].detach().to("cpu", torch.float32).clone()}
    if rows.untied_head:
        out[HEAD_ROWS_KEY] = model.head[rows.start :].detach().to("cpu", torch.float32).clone()
    return out


def merged(base: torch.Tensor, start: int, rows: torch.Tensor) -> torch.Tensor:
    """The base matrix with its rows [start, ...) replaced by the trained ones (differentiable in them)."""
    return torch.cat([base[:start], rows.to(base.dtype)], dim=0)


@dataclass(frozen=True)
class SplitHead:
    """The output matrix of a pass with trained rows, kept in two parts: the frozen standard rows
    and the trained reasoning rows. Projecting onto each part apart means the backward pass
    computes a gradient for the n_r trained rows only, never a [n_s + n_r, hidden] one."""

    base: torch.Tensor  # [n_s + n_r, hidden]; rows n_s.. are the copies the trained rows replace
    start: int
    rows: torch.Tensor  # [n_r, hidden]

    @property
    def shape(self):
        return self.base.shape


def head_for(model, adapter):
    """What a pass with `adapter` projects onto (None adapter: the base's head)."""
    rows = adapter.rows() if adapter is not None else None
    if rows is None:
        return model.head
    return SplitHead(model.head, adapter.token_rows.start, rows[1])


def logits_of(hidden: torch.Tensor, head) -> torch.Tensor:
    """hidden @ headᵀ for a head matrix or a SplitHead."""
    if isinstance(head, SplitHead):
        standard = hidden @ head.base[: head.start].t().to(hidden.dtype)
        return torch.cat([standard, hidden @ head.rows.t().to(hidden.dtype)], dim=-1)
    return hidden @ head.t().to(hidden.dtype)


def embedding_for(base_embedding: torch.Tensor, adapter) -> torch.Tensor:
    """The full embedding table with an adapter's trained rows in place (the transformers source
    runs its embedding module on it, so that a scaled embedding keeps its scale)."""
    rows = adapter.rows() if adapter is not None else None
    if rows is None:
        return base_embedding
    return merged(base_embedding, adapter.token_rows.start, rows[0])


def embed(ids: torch.Tensor, base_embedding: torch.Tensor, adapter) -> torch.Tensor:
    """The native model's embedding lookup: standard ids from the frozen table, reasoning ids from
    the adapter's trained rows when it has them (the backward pass touches only those rows)."""
    rows = adapter.rows() if adapter is not None else None
    if rows is None:
        return F.embedding(ids, base_embedding)
    start = adapter.token_rows.start
    reasoning = ids >= start
    standard = F.embedding(ids.masked_fill(reasoning, 0), base_embedding)
    trained = F.embedding((ids - start).clamp(min=0), rows[0].to(base_embedding.dtype))
    return torch.where(reasoning[..., None], trained, standard)
