"""The gradient of one step's loss with respect to the LoRA weights, accumulated into the
parameters' .grad over micro-batches, and the sums behind the step's metrics.

Old and reference logprobs are inputs when computed beforehand (replayed iterations, the former
step, the parity tests' fixed inputs). Otherwise, as TRL and the TS learner do: with one
on-policy update "old" is the current policy, so the loss takes the detached logprobs of the pass
it differentiates (no extra pass); and the reference is scored inside each micro-batch, without
gradient, just before the policy's pass over the same rows (no round trip through Python lists).

`plan` says which micro-batches this process computes (all of them, or one rank's share under
torch.distributed) and whether each counts (a sharded rank with nothing left runs a pass that
does not, to keep in step with the others); each micro-batch's loss is already its share of the
whole step's loss."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from ..algorithms.dpo_term import dpo_pair_loss, preference_pairs
from ..algorithms.loss_settings import LossSettings
from ..algorithms.policy_loss import PolicyLossInputs, policy_loss
from ..completion_logprobs import DEFAULT_PROJECTION, Projection, completion_logprobs, rows_of
from ..lora.lora_adapter import LoraAdapter
from ..model.causal_lm import CausalLM, ForwardOptions
from ..sampling import SamplingDistribution
from .micro_batches import micro_batches
from .model_tokens import loss_mask, model_token_count
from .prepared_batch import PreparedBatch, PreparedRow


@dataclass
class StepGradients:
    loss: float = 0.0
    clip_low: float = 0.0
    clip_high: float = 0.0
    clip_region: float = 0.0
    kl: float | None = None
    entropy: float = 0.0
    micro_batches: int = 0
    # Filled when the step asked for them (batch row -> completion logprobs): the detached logprobs
    # of the differentiated pass (the on-policy "old"), and the reference scored in the pass.
    detached: dict[int, list[float]] | None = None
    reference: dict[int, list[float]] | None = None

    def as_list(self) -> list[float]:
        return [self.loss, self.clip_low, self.clip_high, self.clip_region, self.kl if self.kl is not None else 0.0, self.entropy]


@dataclass
class StepGradientInputs:
    model: CausalLM
    adapter: LoraAdapter
    settings: LossSettings
    sampling: SamplingDistribution
    batch: PreparedBatch
    old: list[list[float]] | None  # per batch row (RL); None: the detached current logprobs (one on-policy update)
    ref: list[list[float]] | None  # per batch row; when beta ≠ 0 or the DPO term is on
    micro_batch_tokens: int
    dropout_seed: Callable[[int], int] | None = None
    gradient_checkpointing: bool = False
    score_reference: bool = False  # ref is None but needed: score it in each micro-batch
    keep_detached: bool = False  # return the detached logprobs (metrics of an on-policy step)
    keep_reference: bool = False  # return the reference scored here (for replayed iterations)
    projection: Projection = DEFAULT_PROJECTION


def right_aligned(rows: list[list[float]], window: int, device) -> torch.Tensor:
    out = torch.zeros(len(rows), window, dtype=torch.float32)
    for r, row in enumerate(rows):
        if row:
            out[r, window - len(row) :] = torch.tensor(row, dtype=torch.float32)
    return out.to(device)


def column(values: list[float], device) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32, device=device)[:, None]


def step_gradients(inputs: StepGradientInputs, plan: Callable[[int], list[tuple[int, bool]]] | None = None) -> StepGradients:
    batch = inputs.batch
    row_of = {id(row): i for i, row in enumerate(batch.rows)}
    out = StepGradients(detached={} if inputs.keep_detached else None, reference={} if inputs.keep_reference else None)
    cut = micro_batches(batch.rows, inputs.micro_batch_tokens)
    out.micro_batches = len(cut)
    for k, counts in plan(len(cut)) if plan else [(k, True) for k in range(len(cut))]:
        rows = cut[k]
        if not counts:  # the same passes as the other ranks, nothing added
            _uncounted_pass(inputs, rows, k)
            continue
        options = ForwardOptions(
            adapter=inputs.adapter,
            dropout_seed=inputs.dropout_seed(k) if inputs.dropout_seed else None,
            gradient_checkpointing=inputs.gradient_checkpointing,
        )
        pairs = [(r.example.prompt_ids, r.example.completion_ids) for r in rows]
        batch_rows = [row_of[id(r)] for r in rows]
        ref = None
        if inputs.score_reference and batch.mode == "rl":
            with torch.no_grad():
                scored = completion_logprobs(
                    inputs.model,
                    pairs,
                    inputs.sampling,
                    ForwardOptions(adapter=None),
                    Projection(inputs.projection.chunk_floats, False, inputs.projection.compiled),
                )
            ref = scored.logprobs
            if out.reference is not None:
                out.reference.update(zip(batch_rows, rows_of(ref, scored.lengths)))
        scores = completion_logprobs(inputs.model, pairs, inputs.sampling, options, inputs.projection)
        if out.detached is not None:
            out.detached.update(zip(batch_rows, rows_of(scores.logprobs, scores.lengths)))
        # Every sum below runs over the model's tokens only; the environment's conditioned the pass.
        mask = loss_mask(scores.mask, [r.example for r in rows])
        out.entropy += float((scores.entropies * mask).sum())
        if batch.mode == "sft":
            loss = -(scores.logprobs * mask).sum() / max(1, batch.totals.tokens)
        else:
            loss = _rl_loss(inputs, rows, batch_rows, scores.logprobs, mask, out, ref)
        loss.backward()
        out.loss += float(loss.detach())
    return out


def _uncounted_pass(inputs: StepGradientInputs, rows: list[PreparedRow], k: int) -> None:
    """A sharded rank's filler: the same forwards and backward as a real micro-batch (the reference
    too), so its all-gathers pair with the other ranks', with a loss of 0 × its logprobs."""
    pairs = [(r.example.prompt_ids, r.example.completion_ids) for r in rows]
    if inputs.score_reference and inputs.batch.mode == "rl":
        with torch.no_grad():
            completion_logprobs(
                inputs.model,
                pairs,
                inputs.sampling,
                ForwardOptions(adapter=None),
                Projection(inputs.projection.chunk_floats, False, inputs.projection.compiled),
            )
    options = ForwardOptions(
        adapter=inputs.adapter,
        dropout_seed=inputs.dropout_seed(k) if inputs.dropout_seed else None,
        gradient_checkpointing=inputs.gradient_checkpointing,
    )
    scores = completion_logprobs(inputs.model, pairs, inputs.sampling, options, Projection(inputs.projection.chunk_floats, False, inputs.projection.compiled))
    (scores.logprobs.sum() * 0.0).backward()


def _rl_loss(inputs: StepGradientInputs, rows: list[PreparedRow], batch_rows: list[int], logp, mask, out: StepGradients, ref=None):
    settings, batch, device = inputs.settings, inputs.batch, logp.device
    window = logp.shape[1]
    if ref is None and inputs.ref is not None:
        ref = right_aligned([inputs.ref[i] for i in batch_rows], window, device)
    # One on-policy update: the old policy is the current one, so the ratio is exactly 1 and the
    # gradient is the policy gradient (TRL's per_token_logps.detach()).
    old = right_aligned([inputs.old[i] for i in batch_rows], window, device) if inputs.old is not None else logp.detach()
    known = [1.0 if r.example.sampler_logprobs is not None else 0.0 for r in rows]
    use_sampler = settings.importance_sampling_cap is not None and any(known)
    terms = policy_loss(
        settings,
        PolicyLossInputs(
            logp=logp,
            mask=mask,
            old=old,
            ref=ref,
            sampler=right_aligned([r.example.sampler_logprobs or [] for r in rows], window, device) if use_sampler else None,
            sampler_known=column(known, device) if use_sampler else None,
            advantages=column([r.advantage for r in rows], device),
            live=column([1.0 if r.live else 0.0 for r in rows], device),
            lengths=column([float(model_token_count(r.example)) for r in rows], device),
        ),
        batch.totals.sequences,
        batch.totals.live_tokens,
    )
    out.clip_low += terms.clip_low
    out.clip_high += terms.clip_high
    out.clip_region += terms.clip_region
    if terms.kl is not None:
        out.kl = (out.kl or 0.0) + terms.kl
    if settings.dpo_coef == 0:
        return terms.loss
    if ref is None:
        raise RuntimeError("step_gradients: the DPO term needs reference logprobs")
    pairs = preference_pairs([r.example.reward for r in rows], [r.example.group_id for r in rows])
    dpo = dpo_pair_loss(logp, ref, mask, pairs, settings.dpo_beta, max(1, batch.totals.pairs))
    return terms.loss + settings.dpo_coef * dpo
