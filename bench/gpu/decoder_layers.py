"""The native decoder layer three ways, in one process, alternated so the ratios compare like with
like: separate linears (the layout before packing), packed projections (q/k/v and gate/up one
matmul each: the default), and packed with torch.compile (torch.compile: true; where torch has it).
Each arm runs the same forward and backward of a LoRA-adapted model.

    python bench/gpu/decoder_layers.py                 # GPU: the Qwen2.5-0.5B shape, bf16
    python bench/gpu/decoder_layers.py --layers 4      # CPU: fewer layers, a smaller vocabulary, float32

Prints seconds per pass (median of --repeats; compilation happens in the untimed warm-up) for
each arm and its ratio to separate linears, and on a GPU the kernels one pass launches."""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import environment  # noqa: F401  (puts the learner on sys.path)
import torch

from model_shapes import QWEN25_05B
from random_model import random_weights

from leangrpo_learner.completion_logprobs import Projection, completion_logprobs
from leangrpo_learner.lora.lora_adapter import LoraAdapter
from leangrpo_learner.lora.lora_config import LoraConfig
from leangrpo_learner.model.causal_lm import CausalLM, ForwardOptions
from leangrpo_learner.model.linear_modules import LINEAR_MODULES
from leangrpo_learner.model.model_config import parse_model_config
from leangrpo_learner.sampling import SamplingDistribution


def one_pass(model: CausalLM, adapter: LoraAdapter, pairs, projection: Projection, cuda: bool) -> float:
    started = time.perf_counter()
    scores = completion_logprobs(model, pairs, SamplingDistribution(), ForwardOptions(adapter=adapter), projection)
    scores.logprobs.sum().backward()
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - started


def loaded_blas() -> str:
    """The BLAS library this process mapped (OpenBLAS, MKL, the reference BLAS: a 5x difference on CPU)."""
    try:
        with open("/proc/self/maps") as maps:
            found = {line.split()[-1] for line in maps if "blas" in line.lower() or "mkl" in line.lower()}
    except OSError:
        return "unknown"
    return ", ".join(sorted(Path(f).name for f in found)) or "none mapped (torch's own kernels)"


def kernel_count(model, adapter, pairs, projection) -> int:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        one_pass(model, adapter, pairs, projection, True)
    return sum(e.count for e in prof.key_averages() if "CUDA" in str(getattr(e, "device_type", "")))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=None, help="decoder layers (default: the shape's 24 on a GPU, 4 on CPU)")
    parser.add_argument(
        "--vocab", type=int, default=None, help="vocabulary (default: the shape's 151936 on a GPU; 8192 on CPU, where the head would take the whole pass)"
    )
    parser.add_argument("--sequences", type=int, default=None, help="rows per pass (default 32 on a GPU, 4 on CPU)")
    parser.add_argument("--prompt-tokens", type=int, default=128)
    parser.add_argument("--completion-tokens", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    dtype = torch.bfloat16 if cuda else torch.float32
    raw = {
        **QWEN25_05B,
        "num_hidden_layers": args.layers or (QWEN25_05B["num_hidden_layers"] if cuda else 4),
        "vocab_size": args.vocab or (QWEN25_05B["vocab_size"] if cuda else 8192),
    }
    sequences = args.sequences or (32 if cuda else 4)
    config = parse_model_config(raw)
    weights = random_weights(raw, seed=1, device=device.type, dtype=dtype)
    separate = CausalLM(config, {k: v.clone() for k, v in weights.items()}, device, "separate", pack=False)
    packed = CausalLM(config, weights, device, "packed", pack=True)
    lora = LoraConfig(16, 32.0, tuple(LINEAR_MODULES))
    adapters = {name: LoraAdapter.create(m.lora_layout(lora), lora, seed=2).to(device) for name, m in (("separate", separate), ("packed", packed))}
    generator = torch.Generator().manual_seed(3)
    pairs = [
        (
            torch.randint(0, raw["vocab_size"], (args.prompt_tokens,), generator=generator).tolist(),
            torch.randint(0, raw["vocab_size"], (args.completion_tokens,), generator=generator).tolist(),
        )
        for _ in range(sequences)
    ]
    projection = Projection(chunk_floats=(512 << 20) // 4 if cuda else 4_194_304, entropies=False)
    models = {"separate": separate, "packed": packed}
    if hasattr(torch, "compile"):
        compiled = CausalLM(config, {k: v.clone() for k, v in packed.weights.items()}, device, "compiled", pack=True)
        compiled.compile_layers()
        models["compiled"] = compiled
        adapters["compiled"] = LoraAdapter.create(compiled.lora_layout(lora), lora, seed=2).to(device)
    for name, model in models.items():  # warm-up: kernels, allocator, compilation
        one_pass(model, adapters[name], pairs, projection, cuda)
        adapters[name].zero_grad(set_to_none=True)
    times = {name: [] for name in models}
    for _ in range(args.repeats):
        for name, model in models.items():
            adapters[name].zero_grad(set_to_none=True)
            times[name].append(one_pass(model, adapters[name], pairs, projection, cuda))
    where = torch.cuda.get_device_name() if cuda else f"CPU ({torch.get_num_threads()} threads, BLAS: {loaded_blas()})"
    tokens = sequences * (args.prompt_tokens + args.completion_tokens)
    shape = f"Qwen2.5-0.5B shape with {raw['num_hidden_layers']} layers and vocabulary {raw['vocab_size']}"
    work = f"{sequences} × {args.prompt_tokens + args.completion_tokens} tokens, LoRA r16 on 7 linears, {dtype}"
    print(f"forward + backward, {shape}, {work}, {where}, torch {torch.__version__}")
    median = {name: statistics.median(t) for name, t in times.items()}
    for name in models:
        kernels = f", {kernel_count(models[name], adapters[name], pairs, projection)} kernels" if cuda else ""
        print(
            f"  {name:<9} {median[name]:.3f} s per pass ({tokens / median[name]:,.0f} tokens/s){kernels}   runs: {', '.join(f'{t:.3f}' for t in times[name])}"
        )
    for name in models:
        if name != "separate":
            print(f"  {name} / separate: {median[name] / median['separate']:.3f}")
    if "compiled" not in models:
        print(f"  compiled: skipped, torch {torch.__version__} has no torch.compile")


if __name__ == "__main__":
    main()
