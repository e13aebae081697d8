"""The reasoning vocabulary computed the slow, obvious way, to check the learners against
(docs/concepts/reasoning-vocabulary.md). Shares no code with services/learner-torch or packages/lm:

- expansion: row n_s + i of the embedding (and of an untied head) is built by a Python loop over
  the map, then trained rows are written over it;
- the block state of every completion prefix is recomputed from scratch on the prefix's source ids
  (find the first start marker, then the first end marker wholly after it), quadratic and plain;
- the mask then sets excluded logits to -inf before temperature and top-k/top-p, keeping the
  sampled token, and reference_model.completion_logprobs' rules do the rest.
"""

import torch
import torch.nn.functional as F

from reference_model import CausalLM, kept_support, left_pad


def expanded_weights(weights, tied, source_ids, embedding_rows=None, head_rows=None):
    """HF-named weights with one copied row per reasoning id (or the given trained rows)."""
    out = dict(weights)
    embed = weights["model.embed_tokens.weight"]
    rows = [embed[s].clone() for s in source_ids]
    out["model.embed_tokens.weight"] = torch.cat([embed, torch.stack(rows)]) if embedding_rows is None else torch.cat([embed, embedding_rows])
    if not tied:
        head = weights["lm_head.weight"]
        copies = torch.stack([head[s].clone() for s in source_ids])
        out["lm_head.weight"] = torch.cat([head, copies if head_rows is None else head_rows])
    return out


def find(sequence, marker, start=0):
    """Index of the first occurrence of `marker` in sequence[start:], or -1."""
    for i in range(start, len(sequence) - len(marker) + 1):
        if sequence[i : i + len(marker)] == marker:
            return i
    return -1


def block_state(prefix_sources, start_ids, end_ids):
    """before / inside / after, for the token that follows this prefix of source ids."""
    opened = find(prefix_sources, start_ids)
    if opened < 0:
        return "before"
    closed = find(prefix_sources, end_ids, opened + len(start_ids))
    return "inside" if closed < 0 else "after"


def allowed(state, mode, n_s, vocab, end_ids):
    keep = torch.ones(vocab, dtype=torch.bool)
    if mode == "free" or (mode == "gated" and state == "inside"):
        return keep
    if state != "inside":
        keep[n_s:] = False
        return keep
    keep[:n_s] = False
    for i in end_ids:
        keep[i] = True
    return keep


def masked_completion_logprobs(cfg, weights, pairs, n_s, source_ids, start_ids, end_ids, mode, temperature=1.0, top_k=0, top_p=1.0):
    """Per completion token: its logprob under mask -> temperature -> top-k/top-p (sampled token kept)."""
    model = CausalLM(cfg, weights)
    ids, mask = left_pad([p + c for p, c in pairs])
    logits = model.logits(ids, mask, use_adapter=False)
    length, vocab = ids.shape[1], logits.shape[-1]

    def source(t):
        return t if t < n_s else source_ids[t - n_s]

    out = []
    for row, (_, completion) in enumerate(pairs):
        values = []
        for t, target in enumerate(completion):
            state = block_state([source(x) for x in completion[:t]], list(start_ids), list(end_ids))
            keep = allowed(state, mode, n_s, vocab, end_ids)
            keep[target] = True
            z = logits[row, length - len(completion) - 1 + t].masked_fill(~keep, float("-inf")) / temperature
            support = kept_support(z[None], top_k, top_p)[0] & keep
            support[target] = True
            values.append(float(F.log_softmax(z.masked_fill(~support, float("-inf")), dim=-1)[target]))
        out.append(values)
    return out
