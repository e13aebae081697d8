"""Writes the learner's parity fixtures from the independent PyTorch reference.

    /usr/bin/python3 scripts/reference/make_fixtures.py [OUT_DIR]

(Debian 12: apt-get install python3-torch.) OUT_DIR defaults to
packages/lm/test/fixtures. Everything is seeded, so a rerun writes the same
numbers. For each tiny model (qwen2: tied head, q/k/v bias, GQA 4/2; qwen3:
q/k norm, head_dim x heads != hidden, untied, two shards; llama: llama3 RoPE
scaling, GQA 4/1, BF16 weights with an F16 head, transformers-v5 config keys) it
writes the HF checkpoint, a PEFT adapter with non-zero A and B, and parity.json:
completion-token logprobs and entropies (adapter on and off, two temperatures)
on a left-padded batch, the gradient of a fixed loss with respect to every
LoRA tensor (gradients.safetensors, PEFT names and shapes), the same with respect
to every base weight without the adapter (full-gradients.safetensors), and greedy
continuations computed by full recomputation.
"""

import json
import os
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_model as ref  # noqa: E402
import safetensors_io  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "packages", "lm", "test", "fixtures")

MODELS = {
    "qwen2-tiny": {
        "config": {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_size": 32,
            "intermediate_size": 48,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "vocab_size": 96,
            "rms_norm_eps": 1e-6,
            "rope_theta": 10000.0,
            "max_position_embeddings": 128,
            "tie_word_embeddings": True,
            "use_sliding_window": False,
            "hidden_act": "silu",
            "bos_token_id": 1,
            "eos_token_id": 2,
            "torch_dtype": "float32",
        },
        "storage": "single",
        "lora": ref.LoraSettings(4, 8, ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]),
    },
    "qwen3-tiny": {
        "config": {
            "architectures": ["Qwen3ForCausalLM"],
            "model_type": "qwen3",
            "hidden_size": 32,
            "intermediate_size": 48,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 12,
            "vocab_size": 96,
            "rms_norm_eps": 1e-6,
            "rope_theta": 1000000.0,
            "max_position_embeddings": 128,
            "tie_word_embeddings": False,
            "attention_bias": False,
            "hidden_act": "silu",
            "bos_token_id": 1,
            "eos_token_id": 2,
            "dtype": "float32",
        },
        "storage": "sharded",
        "lora": ref.LoraSettings(4, 8, ["q_proj", "v_proj", "o_proj", "down_proj"], use_rslora=True),
    },
    "llama-tiny": {
        "config": {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": 32,
            "intermediate_size": 48,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 16,
            "vocab_size": 96,
            "rms_norm_eps": 1e-5,
            "rope_parameters": {
                "rope_type": "llama3",
                "rope_theta": 500000.0,
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64,
            },
            "max_position_embeddings": 256,
            "tie_word_embeddings": False,
            "attention_bias": False,
            "mlp_bias": False,
            "hidden_act": "silu",
            "bos_token_id": 1,
            "eos_token_id": [2, 3],
            "dtype": "bfloat16",
        },
        "storage": "bf16",
        "lora": ref.LoraSettings(2, 4, ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]),
    },
}

PAIRS = [
    ([5, 17, 33, 2], [40, 41, 7, 90, 12]),
    ([3], [8, 9]),
    ([60, 61, 62, 63, 64, 65, 66], [1, 95, 0]),
    ([20, 0, 44], [71, 72, 73, 74, 75, 76, 77]),
]
GREEDY_PROMPTS = [[5, 17, 33], [70, 2, 9, 41, 88, 13]]
GREEDY_STEPS = 6


def random_weights(cfg, generator):
    def normal(*shape, std):
        return torch.randn(*shape, generator=generator) * std

    def norm_weight(size):
        return 1.0 + normal(size, std=0.1)

    w = {"model.embed_tokens.weight": normal(cfg.vocab, cfg.hidden, std=0.3)}
    shapes = ref.module_shapes(cfg)
    for i in range(cfg.layers):
        p = f"model.layers.{i}"
        w[p + ".input_layernorm.weight"] = norm_weight(cfg.hidden)
        w[p + ".post_attention_layernorm.weight"] = norm_weight(cfg.hidden)
        for module, group in ref.LORA_MODULES.items():
            fan_in, fan_out = shapes[module]
            w[f"{p}.{group}.{module}.weight"] = normal(fan_out, fan_in, std=0.15)
        if cfg.qkv_bias:
            for module in ("q_proj", "k_proj", "v_proj"):
                w[f"{p}.self_attn.{module}.bias"] = normal(shapes[module][1], std=0.1)
        if cfg.qk_norm:
            w[p + ".self_attn.q_norm.weight"] = norm_weight(cfg.head_dim)
            w[p + ".self_attn.k_norm.weight"] = norm_weight(cfg.head_dim)
    w["model.norm.weight"] = norm_weight(cfg.hidden)
    if not cfg.tied:
        w["lm_head.weight"] = normal(cfg.vocab, cfg.hidden, std=0.3)
    return w


def random_lora(cfg, settings, generator):
    shapes = ref.module_shapes(cfg)
    lora = {}
    for i in range(cfg.layers):
        for module in settings.targets:
            fan_in, fan_out = shapes[module]
            lora[ref.lora_key(i, module, "A")] = torch.randn(settings.r, fan_in, generator=generator) * 0.2
            lora[ref.lora_key(i, module, "B")] = torch.randn(fan_out, settings.r, generator=generator) * 0.1
    return lora


def save_checkpoint(directory, raw_config, weights, storage):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(raw_config, f, indent=2)
    if storage == "single":
        safetensors_io.write(os.path.join(directory, "model.safetensors"), weights, {"format": "pt"})
        return weights
    if storage == "bf16":
        stored = {k: v.to(torch.float16 if k == "lm_head.weight" else torch.bfloat16) for k, v in weights.items()}
        safetensors_io.write(os.path.join(directory, "model.safetensors"), stored, {"format": "pt"})
        # The model the learner sees is the stored one, widened to float32.
        return {k: v.float() for k, v in stored.items()}
    names = list(weights)
    shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2], "model-00002-of-00002.safetensors": names[len(names) // 2 :]}
    weight_map = {}
    for file, keys in shards.items():
        safetensors_io.write(os.path.join(directory, file), {k: weights[k] for k in keys}, {"format": "pt"})
        weight_map.update({k: file for k in keys})
    total = sum(v.numel() * 4 for v in weights.values())
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    return weights


def max_difference(a, b):
    return max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def rounded(values):
    return [[float(x) for x in row] for row in values]


def model_fixture(name, spec):
    generator = torch.Generator().manual_seed(sum(map(ord, name)))
    cfg = ref.Config(spec["config"])
    directory = os.path.join(OUT, name)
    weights = save_checkpoint(directory, spec["config"], random_weights(cfg, generator), spec["storage"])
    settings = spec["lora"]
    lora = random_lora(cfg, settings, generator)
    adapter_dir = os.path.join(OUT, name + "-lora")
    os.makedirs(adapter_dir, exist_ok=True)
    with open(os.path.join(adapter_dir, "adapter_config.json"), "w") as f:
        json.dump(settings.peft_config(name), f, indent=2)
    safetensors_io.write(os.path.join(adapter_dir, "adapter_model.safetensors"), lora, {"format": "pt"})

    model = ref.CausalLM(cfg, weights, settings, lora)
    cases = []
    for temperature, use_adapter in ((1.0, True), (1.0, False), (0.7, True)):
        with torch.no_grad():
            logprobs, entropies = ref.completion_logprobs(model, PAIRS, temperature, use_adapter)
            # The reference's own padding logic: one sequence at a time gives the same numbers.
            for row, pair in enumerate(PAIRS):
                alone, _ = ref.completion_logprobs(model, [pair], temperature, use_adapter)
                assert torch.allclose(alone[0], logprobs[row], atol=1e-5), "padding changes the reference"
        cases.append({"temperature": temperature, "adapter": use_adapter, "logprobs": rounded(logprobs), "entropies": rounded(entropies)})
    on, off = cases[0]["logprobs"], cases[1]["logprobs"]
    assert max_difference(on, off) > 1e-2, "adapter too weak to test"
    if cfg.rope:
        # The RoPE scaling must change the numbers, or the fixture could not catch its absence.
        unscaled = ref.Config({**spec["config"], "rope_parameters": {"rope_theta": cfg.rope_theta}})
        with torch.no_grad():
            plain, _ = ref.completion_logprobs(ref.CausalLM(unscaled, weights, settings, lora), PAIRS, 1.0)
        assert max_difference(on, rounded(plain)) > 1e-3, "RoPE scaling too weak to test"

    # Gradient of a fixed loss with respect to every LoRA tensor.
    temperature, entropy_coef = 0.7, 0.1
    token_weights = [torch.randn(len(c), generator=generator) for _, c in PAIRS]
    params = {k: v.clone().requires_grad_(True) for k, v in lora.items()}
    model = ref.CausalLM(cfg, weights, settings, params)
    logprobs, entropies = ref.completion_logprobs(model, PAIRS, temperature)
    loss = sum((w * lp).sum() + entropy_coef * e.sum() for w, lp, e in zip(token_weights, logprobs, entropies))
    loss.backward()
    safetensors_io.write(os.path.join(OUT, name + "-gradients.safetensors"), {k: p.grad for k, p in params.items()})

    # The same loss's gradient with respect to every base weight, no adapter (full fine-tuning).
    base_params = {k: v.clone().requires_grad_(True) for k, v in weights.items()}
    model = ref.CausalLM(cfg, base_params)
    logprobs, entropies = ref.completion_logprobs(model, PAIRS, temperature, False)
    full_loss = sum((w * lp).sum() + entropy_coef * e.sum() for w, lp, e in zip(token_weights, logprobs, entropies))
    full_loss.backward()
    safetensors_io.write(os.path.join(OUT, name + "-full-gradients.safetensors"), {k: p.grad for k, p in base_params.items()})

    model = ref.CausalLM(cfg, weights)
    greedy = []
    with torch.no_grad():
        for prompt in GREEDY_PROMPTS:
            tokens, margin = ref.greedy(model, prompt, GREEDY_STEPS)
            assert margin > 1e-3, f"greedy margin {margin} too small for a stable test"
            greedy.append({"prompt": prompt, "tokens": tokens})

    parity = {
        "model": name,
        "adapter": name + "-lora",
        "pairs": [{"prompt": p, "completion": c} for p, c in PAIRS],
        "cases": cases,
        "gradient": {
            "temperature": temperature,
            "entropy_coef": entropy_coef,
            "token_weights": rounded(token_weights),
            "loss": float(loss),
            "file": name + "-gradients.safetensors",
        },
        "full_gradient": {"loss": float(full_loss), "file": name + "-full-gradients.safetensors"},
        "greedy": greedy,
    }
    with open(os.path.join(OUT, name + "-parity.json"), "w") as f:
        json.dump(parity, f, indent=1)


def dtype_fixture():
    """BF16/F16 values (specials, subnormals, ties) with torch's own float32 widening and bf16 rounding."""
    generator = torch.Generator().manual_seed(7)
    specials = [0.0, -0.0, 1.0, -1.5, 3.14159, 1e-40, -2.5e-39, 65504.0, 1e30, -3e38, float("inf"), float("-inf"), float("nan"), 1.17549435e-38, 6e-8, -6.1e-5]
    bf16 = torch.tensor(specials + torch.randn(16, generator=generator).tolist()).to(torch.bfloat16).reshape(4, 8)
    f16_values = [0.0, -0.0, 1.0, -1.5, 3.14159, 6e-8, -5.96e-8, 65504.0, -65504.0, 1e-5, float("inf"), float("-inf"), float("nan"), 6.1035e-5, 0.333, 2.0]
    f16 = torch.tensor(f16_values + torch.randn(8, generator=generator).tolist()).to(torch.float16).reshape(2, 3, 4)
    # float32 values whose bf16 rounding exercises round-to-nearest-even (exact ties included).
    ties = [1.00390625, 1.01171875, -1.00390625, 3.0000001, 65535.0, 3.4e38, 1e-45]
    to_round = torch.tensor(ties + (torch.randn(25, generator=generator) * 100).tolist(), dtype=torch.float32)
    safetensors_io.write(
        os.path.join(OUT, "dtypes.safetensors"),
        {
            "values.bf16": bf16,
            "values.bf16.as_f32": bf16.float(),
            "values.f16": f16,
            "values.f16.as_f32": f16.float(),
            "rounding.f32": to_round,
            "rounding.bf16": to_round.to(torch.bfloat16),
        },
        {"source": "scripts/reference/make_fixtures.py"},
    )


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    for name, spec in MODELS.items():
        model_fixture(name, spec)
    dtype_fixture()


if __name__ == "__main__":
    main()
