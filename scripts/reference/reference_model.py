"""An independent plain-PyTorch Qwen2 / Qwen3 / Llama causal LM with PEFT-style LoRA.

Written from the Hugging Face modeling code's semantics (modeling_qwen2.py,
modular_qwen3.py, modeling_llama.py, modeling_rope_utils.py, peft/tuners/lora),
not from the TypeScript learner, so that the learner's numbers can be checked
against it. Everything runs in float32; weights stored as BF16/F16 are widened
first, exactly as the learner does.
"""

import math

import torch
import torch.nn.functional as F

LORA_MODULES = {
    "q_proj": "self_attn",
    "k_proj": "self_attn",
    "v_proj": "self_attn",
    "o_proj": "self_attn",
    "gate_proj": "mlp",
    "up_proj": "mlp",
    "down_proj": "mlp",
}


class Config:
    def __init__(self, raw):
        self.model_type = raw["model_type"]
        self.hidden = raw["hidden_size"]
        self.intermediate = raw["intermediate_size"]
        self.layers = raw["num_hidden_layers"]
        self.heads = raw["num_attention_heads"]
        self.kv_heads = raw.get("num_key_value_heads", self.heads)
        self.head_dim = raw.get("head_dim") or self.hidden // self.heads
        self.vocab = raw["vocab_size"]
        self.eps = raw["rms_norm_eps"]
        rope = dict(raw.get("rope_parameters") or {})
        if raw.get("rope_scaling"):
            rope.update(raw["rope_scaling"])
        self.rope_theta = rope.get("rope_theta", raw.get("rope_theta", 10000.0))
        self.rope = rope
        self.tied = raw.get("tie_word_embeddings", False)
        if self.model_type == "qwen2":
            self.qkv_bias = True
        else:
            self.qkv_bias = raw.get("attention_bias", False)
        self.o_bias = self.model_type != "qwen2" and raw.get("attention_bias", False)
        self.mlp_bias = raw.get("mlp_bias", False)
        self.qk_norm = self.model_type == "qwen3"


def module_shapes(cfg):
    """(in_features, out_features) of each linear, HF names."""
    return {
        "q_proj": (cfg.hidden, cfg.heads * cfg.head_dim),
        "k_proj": (cfg.hidden, cfg.kv_heads * cfg.head_dim),
        "v_proj": (cfg.hidden, cfg.kv_heads * cfg.head_dim),
        "o_proj": (cfg.heads * cfg.head_dim, cfg.hidden),
        "gate_proj": (cfg.hidden, cfg.intermediate),
        "up_proj": (cfg.hidden, cfg.intermediate),
        "down_proj": (cfg.intermediate, cfg.hidden),
    }


def inverse_frequencies(cfg):
    dim = cfg.head_dim
    inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    rope_type = cfg.rope.get("rope_type", cfg.rope.get("type", "default"))
    if rope_type == "default":
        return inv_freq
    if rope_type != "llama3":
        raise ValueError(f"rope type {rope_type} not in this reference")
    # modeling_rope_utils._compute_llama3_parameters
    factor = cfg.rope["factor"]
    low_freq_factor = cfg.rope["low_freq_factor"]
    high_freq_factor = cfg.rope["high_freq_factor"]
    old_context_len = cfg.rope["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama)


def rms_norm(x, weight, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x, groups):
    batch, kv_heads, length, dim = x.shape
    if groups == 1:
        return x
    x = x[:, :, None, :, :].expand(batch, kv_heads, groups, length, dim)
    return x.reshape(batch, kv_heads * groups, length, dim)


class LoraSettings:
    def __init__(self, r, alpha, targets, use_rslora=False):
        self.r = r
        self.alpha = alpha
        self.targets = list(targets)
        self.use_rslora = use_rslora

    @property
    def scaling(self):
        return self.alpha / math.sqrt(self.r) if self.use_rslora else self.alpha / self.r

    def peft_config(self, base):
        return {
            "peft_type": "LORA",
            "task_type": "CAUSAL_LM",
            "base_model_name_or_path": base,
            "r": self.r,
            "lora_alpha": self.alpha,
            "lora_dropout": 0.0,
            "bias": "none",
            "fan_in_fan_out": False,
            "inference_mode": True,
            "target_modules": self.targets,
            "modules_to_save": None,
            "use_rslora": self.use_rslora,
            "use_dora": False,
        }


def lora_key(layer, module, which):
    return f"base_model.model.model.layers.{layer}.{LORA_MODULES[module]}.{module}.lora_{which}.weight"


class CausalLM:
    """weights: HF names -> float32 tensors. lora: PEFT keys -> float32 tensors ([r,in] / [out,r])."""

    def __init__(self, cfg, weights, lora_settings=None, lora=None):
        self.cfg = cfg
        self.w = weights
        self.lora_settings = lora_settings
        self.lora = lora or {}

    def linear(self, x, layer, group, module, bias, use_adapter):
        prefix = f"model.layers.{layer}.{group}.{module}"
        y = x @ self.w[prefix + ".weight"].T
        if bias:
            y = y + self.w[prefix + ".bias"]
        if use_adapter and self.lora_settings and module in self.lora_settings.targets:
            a = self.lora[lora_key(layer, module, "A")]
            b = self.lora[lora_key(layer, module, "B")]
            y = y + (x @ a.T) @ b.T * self.lora_settings.scaling
        return y

    def hidden_states(self, input_ids, attention_mask, use_adapter=True):
        cfg = self.cfg
        batch, length = input_ids.shape
        x = self.w["model.embed_tokens.weight"][input_ids]
        # Left padding: positions count real tokens only (HF generate's position_ids).
        positions = attention_mask.long().cumsum(-1) - 1
        positions = positions.masked_fill(attention_mask == 0, 1)
        freqs = positions[:, :, None].float() * inverse_frequencies(cfg)[None, None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[:, None], emb.sin()[:, None]
        causal = torch.tril(torch.ones(length, length, dtype=torch.bool))
        allowed = causal[None, None] & attention_mask.bool()[:, None, None, :]
        bias = torch.zeros(allowed.shape).masked_fill(~allowed, torch.finfo(torch.float32).min)
        groups = cfg.heads // cfg.kv_heads
        for i in range(cfg.layers):
            p = f"model.layers.{i}"
            h = rms_norm(x, self.w[p + ".input_layernorm.weight"], cfg.eps)
            q = self.linear(h, i, "self_attn", "q_proj", cfg.qkv_bias, use_adapter)
            k = self.linear(h, i, "self_attn", "k_proj", cfg.qkv_bias, use_adapter)
            v = self.linear(h, i, "self_attn", "v_proj", cfg.qkv_bias, use_adapter)
            q = q.view(batch, length, cfg.heads, cfg.head_dim)
            k = k.view(batch, length, cfg.kv_heads, cfg.head_dim)
            v = v.view(batch, length, cfg.kv_heads, cfg.head_dim)
            if cfg.qk_norm:
                q = rms_norm(q, self.w[p + ".self_attn.q_norm.weight"], cfg.eps)
                k = rms_norm(k, self.w[p + ".self_attn.k_norm.weight"], cfg.eps)
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k, v = repeat_kv(k, groups), repeat_kv(v, groups)
            scores = (q @ k.transpose(2, 3)) * cfg.head_dim**-0.5 + bias
            attn = F.softmax(scores, dim=-1) @ v
            attn = attn.transpose(1, 2).reshape(batch, length, cfg.heads * cfg.head_dim)
            x = x + self.linear(attn, i, "self_attn", "o_proj", cfg.o_bias, use_adapter)
            h = rms_norm(x, self.w[p + ".post_attention_layernorm.weight"], cfg.eps)
            gate = self.linear(h, i, "mlp", "gate_proj", cfg.mlp_bias, use_adapter)
            up = self.linear(h, i, "mlp", "up_proj", cfg.mlp_bias, use_adapter)
            x = x + self.linear(F.silu(gate) * up, i, "mlp", "down_proj", cfg.mlp_bias, use_adapter)
        return rms_norm(x, self.w["model.norm.weight"], cfg.eps)

    def head(self):
        return self.w["model.embed_tokens.weight" if self.cfg.tied else "lm_head.weight"]

    def logits(self, input_ids, attention_mask, use_adapter=True):
        return self.hidden_states(input_ids, attention_mask, use_adapter) @ self.head().T


def left_pad(sequences, pad_id=0):
    length = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), length), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, length - len(seq) :] = torch.tensor(seq)
        mask[row, length - len(seq) :] = 1
    return ids, mask


def kept_support(scaled, top_k=0, top_p=1.0):
    """Boolean [..., vocab]: the tokens the sampling distribution keeps, from temperature-scaled logits.

    As vLLM's sampler: top-k on the scaled logits, then top-p on the softmax of what top-k kept
    (a token is cut when the strictly more likely kept tokens already reach top_p); the most
    likely token always stays. Ties are ordered by token id, lowest first (a stable sort).
    """
    vocab = scaled.shape[-1]
    order = torch.sort(scaled, dim=-1, descending=True, stable=True).indices
    sorted_logits = torch.gather(scaled, -1, order)
    rank = torch.arange(vocab).expand_as(sorted_logits)
    keep_sorted = torch.ones_like(sorted_logits, dtype=torch.bool)
    if 0 < top_k < vocab:
        keep_sorted &= rank < top_k
    if top_p < 1.0:
        probs = torch.softmax(sorted_logits.masked_fill(~keep_sorted, float("-inf")).double(), dim=-1)
        before = torch.cumsum(probs, dim=-1) - probs  # mass of the more likely tokens
        keep_sorted &= before < top_p
        keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted)
    keep.scatter_(-1, order, keep_sorted)
    return keep


def completion_logprobs(model, pairs, temperature, use_adapter=True, top_k=0, top_p=1.0):
    """Per completion token: log p(token | prefix) under the sampling distribution, and its entropy.

    The distribution is softmax(logits / temperature) restricted to the top-k / top-p set and
    renormalised; the completion's own token is always kept (the learner's rule, so its logprob
    is finite when this policy would have cut it). pairs: [(prompt_ids, completion_ids)].
    Returns two lists of 1-D tensors.
    """
    ids, mask = left_pad([p + c for p, c in pairs])
    logits = model.logits(ids, mask, use_adapter) / temperature
    length = ids.shape[1]
    logprobs, entropies = [], []
    for row, (_, completion) in enumerate(pairs):
        # The logits at column j predict the token at column j + 1.
        cols = torch.arange(length - len(completion) - 1, length - 1)
        targets = ids[row, cols + 1]
        z = logits[row, cols]
        keep = kept_support(z.detach(), top_k, top_p)
        keep[torch.arange(len(cols)), targets] = True
        logp_all = F.log_softmax(z.masked_fill(~keep, float("-inf")), dim=-1)
        p_all = logp_all.exp()
        entropies.append(-(p_all * torch.where(keep, logp_all, torch.zeros_like(logp_all))).sum(-1))
        logprobs.append(logp_all[torch.arange(len(cols)), targets])
    return logprobs, entropies


def greedy(model, prompt, steps):
    """Greedy continuation by full recomputation (no cache), with the top-2 margin of every step."""
    tokens = list(prompt)
    margins = []
    for _ in range(steps):
        ids, mask = left_pad([tokens])
        last = model.logits(ids, mask)[0, -1]
        top = torch.topk(last, 2)
        margins.append(float(top.values[0] - top.values[1]))
        tokens.append(int(top.indices[0]))
    return tokens[len(prompt) :], min(margins)
