"""Per-token logprobs and entropies of completions given their prompts: what the losses train
on and what ComputeLogprobs returns.

Prompt + completion are left-padded into one batch, so every completion ends in the last
column and all completion tokens lie in the last C columns (C = longest completion); only
those columns are projected onto the vocabulary, in row chunks so that the [rows × vocab]
logits of a large vocabulary never exist at once (with a gradient, each chunk is recomputed
in the backward pass instead of kept). How large a chunk is (`Projection`) is the device's
choice: a CPU cache's worth on CPU, a few hundred MiB on a GPU, where many small chunks
would each launch a handful of kernels.

Entropies are a metric, never differentiated: they are computed without gradient, and only
where asked for (ComputeLogprobs with include_entropy, and the training pass's metric).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch
from torch.utils.checkpoint import checkpoint

from .model.causal_lm import CausalLM, ForwardOptions
from .model.reasoning_expansion import head_for, logits_of
from .reasoning.logits_mask import RowMask, mask_logits, row_codes
from .sampling import SamplingDistribution, support_mask

LOGIT_FLOATS_PER_CHUNK = 4_194_304  # 16 MiB of float32 logits: the CPU default


@dataclass(frozen=True)
class Projection:
    """How the hidden states become logprobs: the float32 logits held per chunk, and whether
    entropies are computed (a metric: never differentiated)."""

    chunk_floats: int = LOGIT_FLOATS_PER_CHUNK
    entropies: bool = True
    compiled: bool = False  # torch.compile: the head's cast, scaling, logsumexp and gather fused


DEFAULT_PROJECTION = Projection()


@dataclass
class CompletionScores:
    logprobs: torch.Tensor  # [batch, C], right-aligned; 0 off the mask
    entropies: torch.Tensor | None  # [batch, C]; None when not asked for
    mask: torch.Tensor  # [batch, C] float, 1 on completion tokens
    lengths: list[int]


def left_padded(sequences: list[list[int]], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    length = max(len(s) for s in sequences)
    ids = torch.zeros(len(sequences), length, dtype=torch.long)
    mask = torch.zeros(len(sequences), length, dtype=torch.long)
    for row, s in enumerate(sequences):
        ids[row, length - len(s) :] = torch.tensor(s, dtype=torch.long)
        mask[row, length - len(s) :] = 1
    return ids.to(device), mask.to(device)


def compute_precision(device: torch.device, base_dtype: torch.dtype):
    """bf16 autocast on CUDA over bf16 base weights; nothing on CPU (autocast would refuse bf16 on a
    torch built without CUDA) or over float32 weights (parity checks)."""
    if device.type == "cuda" and base_dtype == torch.bfloat16:
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _scaled_logits(hidden: torch.Tensor, head, targets: torch.Tensor, sampling: SamplingDistribution, softcap: float | None, row_mask: RowMask | None):
    logits = logits_of(hidden, head)  # head: a matrix, or a SplitHead with an adapter's trained reasoning rows
    if softcap:  # Gemma 2/3's final_logit_softcapping, as transformers applies it
        logits = torch.tanh(logits / softcap) * softcap
    z = logits.to(torch.float32) / sampling.temperature
    if row_mask is not None:  # the reasoning mask comes before top-k/top-p rank the row
        z = mask_logits(z, targets, row_mask)
    keep = support_mask(z, targets, sampling)
    return z.masked_fill(~keep, float("-inf")) if keep is not None else z


def _target_logprobs(hidden, head, targets, sampling: SamplingDistribution, softcap, row_mask=None):
    """log p(target) = z[target] − logsumexp(z): the [rows × vocab] log-softmax is never materialised."""
    z = _scaled_logits(hidden, head, targets, sampling, softcap, row_mask)
    return z.gather(-1, targets[:, None])[:, 0] - torch.logsumexp(z, dim=-1)


def _logprobs_and_entropies(hidden, head, targets, sampling: SamplingDistribution, softcap, row_mask=None):
    """The target logprobs (differentiable) and each row's entropy (without gradient)."""
    z = _scaled_logits(hidden, head, targets, sampling, softcap, row_mask)
    normaliser = torch.logsumexp(z, dim=-1)
    target = z.gather(-1, targets[:, None])[:, 0] - normaliser
    with torch.no_grad():
        logp = z - normaliser[:, None]
        p = logp.exp()
        # Tokens outside the support have p = 0 and logp = −inf; their 0·(−inf) must count as 0.
        entropy = -(p * logp.masked_fill(p == 0, 0)).sum(-1)
    return target, entropy


def _project_chunk(hidden, head, targets, sampling, softcap, entropies: bool, row_mask: RowMask | None = None):
    if entropies:
        return _logprobs_and_entropies(hidden, head, targets, sampling, softcap, row_mask)
    return _target_logprobs(hidden, head, targets, sampling, softcap, row_mask), None


_COMPILED: dict[str, object] = {}


def compiled_projection():
    """_project_chunk under torch.compile (made once; dynamic shapes, since the last chunk is shorter)."""
    if "project" not in _COMPILED:
        _COMPILED["project"] = torch.compile(_project_chunk, dynamic=True)
    return _COMPILED["project"]


def completion_logprobs(
    model: CausalLM,  # or TransformersCausalLM: the same interface
    pairs: list[tuple[list[int], list[int]]],
    sampling: SamplingDistribution,
    options: ForwardOptions,
    projection: Projection = DEFAULT_PROJECTION,
) -> CompletionScores:
    """Differentiable (in the adapter) logprobs of (prompt ids, completion ids) pairs."""
    lengths = [len(c) for _, c in pairs]
    window = max(lengths)
    ids, mask = left_padded([list(p) + list(c) for p, c in pairs], model.device)
    batch, length = ids.shape
    with compute_precision(model.device, model.base_dtype):
        hidden = model.hidden_states(ids, mask, options)
        # Column j's hidden state predicts the token in column j + 1.
        scored = hidden[:, length - 1 - window : length - 1, :].reshape(batch * window, -1)
        targets = ids[:, length - window :].reshape(-1)
        chunk = max(1, projection.chunk_floats // model.config.vocab_size)
        project = compiled_projection() if projection.compiled else _project_chunk
        head = head_for(model, options.adapter)  # an adapter's trained reasoning rows in place of the base's copies
        codes = reasoning_row_codes(model, pairs, window, sampling)
        logprobs, entropies = [], []
        for start in range(0, batch * window, chunk):
            h, t = scored[start : start + chunk], targets[start : start + chunk]
            row_mask = codes.chunk(start, start + chunk) if codes is not None else None
            if torch.is_grad_enabled() and batch * window > chunk:
                target, entropy = checkpoint(project, h, head, t, sampling, model.logit_softcap, projection.entropies, row_mask, use_reentrant=False)
            else:
                target, entropy = project(h, head, t, sampling, model.logit_softcap, projection.entropies, row_mask)
            logprobs.append(target)
            entropies.append(entropy)
    columns = torch.arange(window, device=model.device)
    completion_mask = (columns[None, :] >= (window - torch.tensor(lengths, device=model.device))[:, None]).to(torch.float32)
    logp = torch.cat(logprobs).view(batch, window).to(torch.float32) * completion_mask
    entropy = torch.cat(entropies).view(batch, window).to(torch.float32) * completion_mask if projection.entropies else None
    return CompletionScores(logp, entropy, completion_mask, lengths)


@dataclass
class _RowCodes:
    standard_size: int
    end_ids: tuple[int, ...]
    codes: torch.Tensor  # [batch * window]

    def chunk(self, start: int, end: int) -> RowMask:
        return RowMask(self.standard_size, self.end_ids, self.codes[start:end])


def reasoning_row_codes(model, pairs, window: int, sampling: SamplingDistribution) -> _RowCodes | None:
    """The reasoning mask code of every scored row (right-aligned completions; padding rows open), or
    None when the sampling's mask excludes nothing (free, or no reasoning vocabulary)."""
    vocabulary = getattr(model, "reasoning_vocabulary", None)
    if sampling.reasoning_mask in (None, "free") or vocabulary is None:
        return None
    codes = torch.zeros(len(pairs), window, dtype=torch.long)
    for row, (_, completion) in enumerate(pairs):
        if completion:
            codes[row, window - len(completion) :] = torch.tensor(row_codes(completion, vocabulary, sampling.reasoning_mask), dtype=torch.long)
    return _RowCodes(vocabulary.standard_size, vocabulary.markers.end_ids, codes.reshape(-1))


def rows_of(values: torch.Tensor, lengths: list[int]) -> list[list[float]]:
    """Right-aligned [batch, C] values as one list per row (its completion tokens only)."""
    window = values.shape[1]
    data = values.detach().to("cpu", torch.float64)
    return [data[row, window - n :].tolist() for row, n in enumerate(lengths)]
