"""The architecture settings of a Hugging Face config.json for qwen2, qwen3 and llama.

Same rules as packages/lm/src/model/model-config.ts: v4 keys (torch_dtype, rope_theta,
rope_scaling) and v5 keys (dtype, rope_parameters) are both read; anything the forward pass
would silently get wrong is refused, naming the key and what is accepted.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError

MODEL_TYPES = ("qwen2", "qwen3", "llama")
CHECKPOINT_DTYPES = ("float32", "bfloat16", "float16")
ROPE_TYPES = ("default", "llama3")


@dataclass(frozen=True)
class Llama3RopeScaling:
    factor: float
    low_freq_factor: float
    high_freq_factor: float
    original_max_position_embeddings: float


@dataclass(frozen=True)
class ModelConfig:
    model_type: str
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    rms_norm_eps: float
    rope_theta: float
    rope_scaling: Llama3RopeScaling | None
    max_position_embeddings: int
    tie_word_embeddings: bool
    qkv_bias: bool
    output_bias: bool
    mlp_bias: bool
    qk_norm: bool
    dtype: str


def _fail(key: str, message: str):
    raise ModelError(f'config.json "{key}" {message}')


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _positive_int(raw: dict, key: str, fallback=None) -> int:
    value = raw.get(key, fallback)
    if value is None:
        _fail(key, "is missing; it must be a positive integer")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not _is_int(value) or value <= 0:
        _fail(key, f"is {value!r}; it must be a positive integer")
    return value


def _positive_number(raw: dict, key: str, fallback: float) -> float:
    value = raw.get(key, fallback)
    if not _is_number(value) or not value > 0:
        _fail(key, f"is {value!r}; it must be a positive number")
    return float(value)


def _flag(raw: dict, key: str, fallback: bool) -> bool:
    value = raw.get(key, fallback)
    if not isinstance(value, bool):
        _fail(key, f"is {value!r}; it must be true or false")
    return value


def _rope(raw: dict) -> tuple[float, Llama3RopeScaling | None]:
    key = "rope_parameters" if raw.get("rope_parameters") is not None else "rope_scaling"
    params = raw.get("rope_parameters") or raw.get("rope_scaling") or {}
    if not isinstance(params, dict):
        _fail(key, "must be an object")
    theta = params.get("rope_theta", raw.get("rope_theta", 10000))
    if not _is_number(theta) or not theta > 0:
        _fail("rope_theta", f"is {theta!r}; it must be a positive number")
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type not in ROPE_TYPES:
        _fail(f"{key}.rope_type", f"is {rope_type!r}; accepted: {', '.join(ROPE_TYPES)}")
    if rope_type == "default":
        return float(theta), None

    def number(name: str) -> float:
        value = params.get(name)
        if not _is_number(value) or not value > 0:
            _fail(f"{key}.{name}", f"is {value!r}; llama3 RoPE needs a positive number")
        return float(value)

    scaling = Llama3RopeScaling(number("factor"), number("low_freq_factor"), number("high_freq_factor"), number("original_max_position_embeddings"))
    if scaling.high_freq_factor <= scaling.low_freq_factor:
        _fail(f"{key}.high_freq_factor", "must be greater than low_freq_factor")
    return float(theta), scaling


def parse_model_config(raw) -> ModelConfig:
    if not isinstance(raw, dict):
        raise ModelError("config.json must be a JSON object")
    model_type = raw.get("model_type")
    if model_type not in MODEL_TYPES:
        _fail("model_type", f"is {model_type!r}; accepted: {', '.join(MODEL_TYPES)}")
    if raw.get("quantization_config") is not None:
        _fail("quantization_config", "is set; quantized checkpoints are not supported (use F32, BF16 or F16 weights)")
    dtype_key = "dtype" if "dtype" in raw else "torch_dtype"
    dtype = raw.get(dtype_key) or "float32"
    if dtype not in CHECKPOINT_DTYPES:
        _fail(dtype_key, f"is {dtype!r}; accepted: {', '.join(CHECKPOINT_DTYPES)}")
    activation = raw.get("hidden_act", "silu")
    if activation != "silu":
        _fail("hidden_act", f'is {activation!r}; accepted: "silu"')
    if raw.get("use_sliding_window") is True:
        _fail("use_sliding_window", "is true; sliding-window attention is not supported")
    layer_types = raw.get("layer_types")
    if isinstance(layer_types, list) and any(t != "full_attention" for t in layer_types):
        _fail("layer_types", 'must be all "full_attention"; sliding-window attention is not supported')
    if raw.get("attention_dropout", 0) not in (0, 0.0):
        _fail("attention_dropout", f"is {raw.get('attention_dropout')!r}; accepted: 0")
    hidden = _positive_int(raw, "hidden_size")
    heads = _positive_int(raw, "num_attention_heads")
    kv_heads = _positive_int(raw, "num_key_value_heads", heads)
    if heads % kv_heads != 0:
        _fail("num_key_value_heads", f"is {kv_heads}; it must divide num_attention_heads ({heads})")
    if raw.get("head_dim") is None and hidden % heads != 0:
        _fail("head_dim", f"is missing and hidden_size {hidden} is not divisible by num_attention_heads {heads}")
    head_dim = _positive_int(raw, "head_dim", hidden // heads)
    if head_dim % 2 != 0:
        _fail("head_dim", f"is {head_dim}; rotary embeddings need an even head_dim")
    attention_bias = _flag(raw, "attention_bias", False)
    theta, scaling = _rope(raw)
    return ModelConfig(
        model_type=model_type,
        hidden_size=hidden,
        intermediate_size=_positive_int(raw, "intermediate_size"),
        num_layers=_positive_int(raw, "num_hidden_layers"),
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=_positive_int(raw, "vocab_size"),
        rms_norm_eps=_positive_number(raw, "rms_norm_eps", 1e-6),
        rope_theta=theta,
        rope_scaling=scaling,
        max_position_embeddings=_positive_int(raw, "max_position_embeddings", 32768),
        tie_word_embeddings=_flag(raw, "tie_word_embeddings", False),
        # Qwen2Attention hard-codes bias=True on q/k/v and False on o; it has no attention_bias key.
        qkv_bias=True if model_type == "qwen2" else attention_bias,
        output_bias=False if model_type == "qwen2" else attention_bias,
        mlp_bias=_flag(raw, "mlp_bias", False) if model_type == "llama" else False,
        qk_norm=model_type == "qwen3",
        dtype=dtype,
    )
