"""The learner's config: the same keys, defaults and meaning as the TS learner's
(services/learner/src/config.ts, with the kit's `server` section), plus a `torch` section of
this learner's own. Unknown keys and bad values raise ConfigError naming the key and what is
accepted; the CLI turns it into exit code 2."""
from __future__ import annotations

import copy
import math

from .model.linear_modules import LINEAR_MODULES
from .model.transformers_support import ATTN_IMPLEMENTATIONS, transformers_missing
from .optimizer.lr_schedule import LR_SCHEDULES


class ConfigError(ValueError):
    pass


def _int(min_value=None, max_value=None):
    def check(key, v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not float(v).is_integer():
            raise ConfigError(f'config key "{key}" is {v!r}; accepted: an integer')
        v = int(v)
        if (min_value is not None and v < min_value) or (max_value is not None and v > max_value):
            raise ConfigError(f'config key "{key}" is {v}; accepted: an integer in [{min_value}, {max_value if max_value is not None else "∞"}]')
        return v

    return check


def _optional_int(min_value=None):
    check_int = _int(min_value)

    def check(key, v):
        return None if v is None else check_int(key, v)

    return check


def _number(positive=False, min_value=None, below=None, nullable=False):
    def check(key, v):
        if v is None and nullable:
            return None
        ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
        ok = ok and (not positive or v > 0) and (min_value is None or v >= min_value) and (below is None or v < below)
        if not ok:
            bounds = " > 0" if positive else (f" in [{min_value}, {below})" if below is not None else f" >= {min_value}" if min_value is not None else "")
            raise ConfigError(f'config key "{key}" is {v!r}; accepted: a number{bounds}{", or null" if nullable else ""}')
        return float(v)

    return check


def _string(optional=False):
    def check(key, v):
        if v is None and optional:
            return None
        if not isinstance(v, str) or not v:
            raise ConfigError(f'config key "{key}" is {v!r}; accepted: a non-empty string')
        return v

    return check


def _enum(*values):
    def check(key, v):
        if v not in values:
            raise ConfigError(f'config key "{key}" is {v!r}; accepted: {", ".join(values)}')
        return v

    return check


def _tokens_or_auto(key, v):
    if v is None or v == "auto":
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not float(v).is_integer() or v < 1:
        raise ConfigError(
            f'config key "{key}" is {v!r}; accepted: "auto" (sized from the GPU\'s free memory; on CPU the top-level '
            "micro_batch_tokens), an integer >= 1, or null (the top-level micro_batch_tokens)"
        )
    return int(v)


def _bool(key, v):
    if not isinstance(v, bool):
        raise ConfigError(f'config key "{key}" is {v!r}; accepted: true or false')
    return v


def _markers(key, v):
    if not isinstance(v, list) or len(v) != 2 or any(not isinstance(m, str) or not m for m in v) or v[0] == v[1]:
        raise ConfigError(f'config key "{key}" is {v!r}; accepted: two different non-empty strings [start, end], e.g. ["<think>", "</think>"]')
    return list(v)


def _modules(key, v):
    # Which names are known depends on torch.model_source; load_config checks that after parsing.
    if not isinstance(v, list) or not v or any(not isinstance(m, str) or not m for m in v) or len(set(v)) != len(v):
        raise ConfigError(f'config key "{key}" is {v!r}; accepted: a non-empty list of distinct module names ({", ".join(LINEAR_MODULES)})')
    return list(v)


# key -> (validator, default) or a nested section; None default = unset.
SCHEMA = {
    "server": {
        "host": (_string(), "127.0.0.1"),
        "port": (_int(0, 65535), 50054),
        "tls": {"cert_file": (_string(optional=True), None), "key_file": (_string(optional=True), None)},
        # Beyond loopback without TLS: only where the network already encrypts (the kit's rule).
        "allow_plaintext": (_bool, False),
        "limits": {
            "read_max_bytes": (_int(1), 4 * 1024 * 1024),
            "write_max_bytes": (_int(1), 16 * 1024 * 1024),
            "max_concurrent_calls": (_int(0), 256),
            "max_timeout_ms": (_int(1), 600_000),
            # The TypeScript services' deadlines for calls that send none; grpcio applies none (accepted for one server section).
            "default_timeout_ms": (_optional_int(0), None),
            "default_stream_timeout_ms": (_optional_int(0), None),
            "connections": {
                # grpcio has no cap on connections: set, they are refused (see check_server_limits).
                "max": (_optional_int(0), None),
                "per_peer": (_optional_int(0), None),
                "streams_per_connection": (_int(1), 100),
                "handshake_timeout_ms": (_int(1), 10_000),
                "idle_timeout_ms": (_int(0), 60_000),
            },
            "open_services": {
                "calls_per_connection": (_int(1), 4),
                "max_watches": (_int(1), 64),
                "max_reflection_streams": (_int(1), 16),
                "timeout_ms": (_int(1), 10_000),
            },
        },
        "auth": {"token": (_string(optional=True), None)},
        "shutdown": {"drain_delay_ms": (_int(0), 1_000), "grace_period_ms": (_int(0), 10_000)},
    },
    "model": {
        "dir": (_string(optional=True), None),
        "name": (_string(optional=True), None),
        # The reasoning vocabulary (docs/concepts/reasoning-vocabulary.md): n_r rows copied from
        # standard ids (0 = off), the block's markers, the run's mask mode, an optional map file.
        "reasoning_vocab_size": (_int(0), 0),
        "reasoning_markers": (_markers, ["<think>", "</think>"]),
        "reasoning_mask": (_enum("free", "gated", "strict"), "free"),
        "reasoning_map": (_string(optional=True), None),
    },
    # With a reasoning vocabulary: train its rows beside LoRA, or keep them frozen at their copies.
    "reasoning_rows": (_enum("train", "frozen"), "train"),
    # The TS learner's tensor backend; accepted for one config file for both learners, unused here (see torch.device).
    "backend": (_enum("auto", "cpu", "wasm", "tensorflow"), "auto"),
    # The TS learner's gradient threads, accepted likewise; this learner's are torch.threads and torchrun.
    "threads": (_int(1), 1),
    "lora": {
        "rank": (_int(1), 16),
        "alpha": (_number(positive=True), 32.0),
        "target_modules": (_modules, ["q_proj", "k_proj", "v_proj", "o_proj"]),
        "dropout": (_number(min_value=0, below=1), 0.0),
        "use_rslora": (_bool, False),
    },
    "optimizer": {
        "learning_rate": (_number(positive=True), 1e-5),
        "beta1": (_number(min_value=0, below=1), 0.9),
        "beta2": (_number(min_value=0, below=1), 0.999),
        "epsilon": (_number(positive=True), 1e-8),
        "weight_decay": (_number(min_value=0), 0.0),
        "max_grad_norm": (_number(positive=True, nullable=True), 1.0),
        "lr_schedule": (_enum(*LR_SCHEDULES), "constant"),
        "warmup_steps": (_int(0), 0),
        "total_steps": (_int(1), 1000),
    },
    "micro_batch_tokens": (_int(1), 8192),
    "max_samples_per_step": (_int(1), 4096),
    "checkpoint_dir": (_string(), "checkpoints"),
    "adapter_versions_kept": (_int(1), 4),
    "seed": (_int(0), 0),
    # This learner's own settings.
    "torch": {
        # auto: CUDA when present, else CPU.
        "device": (_enum("auto", "cpu", "cuda"), "auto"),
        # CPU: intra-op threads of torch (1 is fastest on 2 cores with OpenBLAS doing the matmuls).
        "threads": (_int(1), 1),
        # CPU: OpenBLAS threads (0 leaves OPENBLAS_NUM_THREADS / the library default).
        "blas_threads": (_int(0), 0),
        "gradient_checkpointing": (_bool, False),
        # Base weights: auto = bfloat16 on CUDA (bf16 autocast, LoRA and AdamW in float32), float32 on
        # CPU; float32 on CUDA is for parity checks (bench/gpu/check.py).
        "dtype": (_enum("auto", "float32", "bfloat16"), "auto"),
        # native: this package's Qwen2/Qwen3/Llama code (no extra packages). transformers: any
        # AutoModelForCausalLM with LoRA injected by peft (both packages must be installed).
        "model_source": (_enum("native", "transformers"), "native"),
        # transformers only; the native model uses torch's SDPA where torch has it.
        "attn_implementation": (_enum(*ATTN_IMPLEMENTATIONS), "sdpa"),
        # Tokens (rows × padded length) of one micro-batch: "auto" sizes it from the GPU's free
        # memory after loading (CPU: the top-level micro_batch_tokens); null: the top-level value.
        "micro_batch_tokens": (_tokens_or_auto, "auto"),
        # float32 logits per vocabulary-projection chunk, MiB; 0: 16 on CPU, 512 on CUDA.
        "logits_chunk_mib": (_int(0, 65536), 0),
        # The step as it was before the fast path (separate old-policy and reference passes,
        # 16 MiB logit chunks, the top-level token budget, unfused AdamW): parity checks, benchmarks.
        "former_step": (_bool, False),
        # torch.compile the native model's decoder layer (one graph for every layer: norms, RoPE,
        # SiLU, residuals and LoRA's scaling fused around the matmuls; passes with LoRA dropout
        # stay eager) and the vocabulary projection (the head's cast, scaling, logsumexp and
        # gather fused); torch >= 2.0. The first steps pay the compilation.
        "compile": (_bool, False),
        # none: every rank holds the whole frozen base. fsdp: under torchrun, each decoder layer's
        # frozen weights are sharded across the ranks (FSDP2 fully_shard, torch >= 2.4).
        "sharding": (_enum("none", "fsdp"), "none"),
    },
}


def _resolve(schema: dict, given: dict, prefix: str) -> dict:
    if not isinstance(given, dict):
        raise ConfigError(f'config key "{prefix.rstrip(".") or "<root>"}" must be an object')
    out = {}
    for key in given:
        if key not in schema:
            where = prefix.rstrip(".")
            raise ConfigError(f'unknown config key "{prefix}{key}"; accepted keys{f" under {where!r}" if where else ""}: {", ".join(schema)}')
    for key, spec in schema.items():
        if isinstance(spec, dict):
            out[key] = _resolve(spec, given.get(key, {}), f"{prefix}{key}.")
        else:
            check, default = spec
            out[key] = check(f"{prefix}{key}", given[key]) if key in given else copy.deepcopy(default)
    return out


def load_config(given: dict) -> dict:
    """The full config (defaults filled in) from a parsed --config-json object."""
    config = _resolve(SCHEMA, given, "")
    tls = config["server"]["tls"]
    if (tls["cert_file"] is None) != (tls["key_file"] is None):
        raise ConfigError('config keys "server.tls.cert_file" and "server.tls.key_file" must be given together')
    check_server_limits(config["server"]["limits"])
    check_model_source(config)
    check_reasoning_settings(config["model"])
    return config


def check_server_limits(limits: dict) -> None:
    """The server limits the TypeScript services have and grpcio cannot apply are refused when set, not ignored."""
    for key in ("max", "per_peer"):
        if limits["connections"][key] is not None:
            raise ConfigError(
                f'config key "server.limits.connections.{key}" is set; the PyTorch learner serves with grpcio, which cannot cap '
                "connections: leave it unset here and cap connections in front of the learner (a proxy or load balancer)"
            )


def check_reasoning_settings(model: dict) -> None:
    """What model.reasoning_* can be checked for without the model (the rest is checked at load)."""
    from .reasoning.token_map import ReasoningVocabError
    from .reasoning.vocabulary import ReasoningSettings, validate_settings

    try:
        validate_settings(ReasoningSettings(model["reasoning_vocab_size"], tuple(model["reasoning_markers"]), model["reasoning_mask"], model["reasoning_map"]))
    except ReasoningVocabError as error:
        raise ConfigError(f"config key {error}") from None


def check_model_source(config: dict) -> None:
    """What torch.model_source needs: the seven native linears, or transformers + peft installed."""
    source, section = config["torch"]["model_source"], config["torch"]
    if section["compile"]:
        import torch

        if not hasattr(torch, "compile"):
            raise ConfigError(f'config key "torch.compile" is true but torch {torch.__version__} has no torch.compile (torch >= 2.0); accepted here: false')
    if section["dtype"] == "bfloat16" and section["device"] == "cpu":
        raise ConfigError('config key "torch.dtype" is "bfloat16" with torch.device "cpu"; bf16 runs on CUDA only (accepted on CPU: auto, float32)')
    if source == "native":
        unknown = [m for m in config["lora"]["target_modules"] if m not in LINEAR_MODULES]
        if unknown:
            raise ConfigError(
                f'config key "lora.target_modules" names {", ".join(repr(m) for m in unknown)}; accepted with torch.model_source "native": '
                f'{", ".join(LINEAR_MODULES)} (other module names need torch.model_source "transformers")'
            )
        if section["attn_implementation"] != "sdpa":
            raise ConfigError(
                f'config key "torch.attn_implementation" is {section["attn_implementation"]!r}, which only torch.model_source "transformers" uses; '
                'the native model uses torch\'s SDPA (accepted here: "sdpa")'
            )
        return
    missing = transformers_missing()
    if missing:
        raise ConfigError(f'config key "torch.model_source" is "transformers" but {missing}; accepted here: "native"')
