"""config.json contents with the shapes of the models the check measures (copied from their
public Hugging Face configs: sizes only, no weights), and tiny shapes of the same three
architectures for the CPU smoke run."""
from __future__ import annotations

COMMON = {"hidden_act": "silu", "attention_dropout": 0.0, "use_cache": False}

QWEN25_05B = {
    **COMMON,
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
}

QWEN3_06B = {
    **COMMON,
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
    "attention_bias": False,
}

LLAMA32_1B = {
    **COMMON,
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 2048,
    "intermediate_size": 8192,
    "num_hidden_layers": 16,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": True,
    "attention_bias": False,
    "mlp_bias": False,
}

QWEN25_7B = {
    **QWEN25_05B,
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": False,
}

# For the memory model's sharded layouts (bench/gpu/memory_model.py): sizes from the public configs.
QWEN25_32B = {**QWEN25_7B, "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8}
QWEN25_72B = {**QWEN25_7B, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8}


def tiny(config: dict) -> dict:
    """The same architecture (model type, GQA ratio, biases, norms, RoPE kind) at toy size."""
    heads, kv = 4, 2
    small = {
        **config,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "vocab_size": 512,
    }
    if "head_dim" in config:
        small["head_dim"] = 16
    return small


PARITY_SHAPES = {"qwen2.5-0.5b": QWEN25_05B, "qwen3-0.6b": QWEN3_06B, "llama-3.2-1b": LLAMA32_1B}
STEP_SHAPE = ("qwen2.5-0.5b", QWEN25_05B)
LARGE_SHAPE = ("qwen2.5-7b", QWEN25_7B)
