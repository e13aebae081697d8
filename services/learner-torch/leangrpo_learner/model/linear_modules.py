"""The seven linear modules of a decoder layer, by their HF (and PEFT target) names."""
from __future__ import annotations

from .model_config import ModelConfig

LINEAR_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
MODULE_GROUP = {m: ("self_attn" if m.endswith(("q_proj", "k_proj", "v_proj", "o_proj")) else "mlp") for m in LINEAR_MODULES}


def linear_features(config: ModelConfig, module: str) -> tuple[int, int]:
    """(in_features, out_features)."""
    h, m, q, kv = config.hidden_size, config.intermediate_size, config.num_heads * config.head_dim, config.num_kv_heads * config.head_dim
    return {
        "q_proj": (h, q),
        "k_proj": (h, kv),
        "v_proj": (h, kv),
        "o_proj": (q, h),
        "gate_proj": (h, m),
        "up_proj": (h, m),
        "down_proj": (m, h),
    }[module]


def has_bias(config: ModelConfig, module: str) -> bool:
    if module in ("q_proj", "k_proj", "v_proj"):
        return config.qkv_bias
    if module == "o_proj":
        return config.output_bias
    return config.mlp_bias


def linear_name(layer: int, module: str) -> str:
    return f"model.layers.{layer}.{MODULE_GROUP[module]}.{module}"


def expected_weights(config: ModelConfig) -> dict[str, list[int]]:
    """Every tensor the forward pass reads, with the shape the config implies."""
    shapes: dict[str, list[int]] = {"model.embed_tokens.weight": [config.vocab_size, config.hidden_size]}
    for i in range(config.num_layers):
        shapes[f"model.layers.{i}.input_layernorm.weight"] = [config.hidden_size]
        shapes[f"model.layers.{i}.post_attention_layernorm.weight"] = [config.hidden_size]
        for module in LINEAR_MODULES:
            fan_in, fan_out = linear_features(config, module)
            shapes[f"{linear_name(i, module)}.weight"] = [fan_out, fan_in]
            if has_bias(config, module):
                shapes[f"{linear_name(i, module)}.bias"] = [fan_out]
        if config.qk_norm:
            shapes[f"model.layers.{i}.self_attn.q_norm.weight"] = [config.head_dim]
            shapes[f"model.layers.{i}.self_attn.k_norm.weight"] = [config.head_dim]
    shapes["model.norm.weight"] = [config.hidden_size]
    if not config.tie_word_embeddings:
        shapes["lm_head.weight"] = [config.vocab_size, config.hidden_size]
    return shapes
