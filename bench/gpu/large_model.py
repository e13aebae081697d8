"""Part 3: the Qwen2.5-7B shape — does one GRPO step of the issue's size fit in 80 GB with
gradient checkpointing, and how long does it take. Weights are generated on the GPU and the
Learner is driven in-process (writing and re-reading 15 GB would only time the disk); the step
itself is the same Learner.train_step the gRPC service runs."""
from __future__ import annotations

import math
import time
from pathlib import Path

import torch

from environment import device_name, learner_config, peak_memory_gib, reset_peak_memory
from flops import grpo_step_flops, mfu
from model_shapes import LARGE_SHAPE, tiny
from random_model import random_weights
from step_client import GPU_BATCH, SMOKE_BATCH, rollout_samples

from leangrpo_learner.model.causal_lm import CausalLM
from leangrpo_learner.model.model_config import parse_model_config
from leangrpo_learner.model.model_source import base_dtype
from leangrpo_learner.rpc.learner_host import learner_options
from leangrpo_learner.training.learner import Learner, StepRequest
from leangrpo_learner.training.training_example import TrainingExample

BUDGET_GIB = 80 * 1e9 / 2**30  # "80 GB" as an H100 sells it: 74.5 GiB


def build_model(config: dict, source: str, device: torch.device, settings: dict):
    dtype = base_dtype(device)
    if source == "native":
        return CausalLM(parse_model_config(config), random_weights(config, seed=1, device=device.type, dtype=dtype), device, "random")
    from transformers import AutoConfig, AutoModelForCausalLM

    from leangrpo_learner.model.transformers_lm import TransformersCausalLM

    hf_config = AutoConfig.for_model(config["model_type"], **{k: v for k, v in config.items() if k != "model_type"})
    with torch.device(device):
        hf_model = AutoModelForCausalLM.from_config(hf_config, dtype=dtype, attn_implementation=settings["torch"]["attn_implementation"])
    return TransformersCausalLM(hf_model, learner_options(settings).lora, device, "random", settings["torch"]["gradient_checkpointing"])


def run(smoke: bool, device: torch.device, work: Path, source: str, compile_: bool = False) -> dict:
    shape_name, shape = LARGE_SHAPE
    config = tiny(shape) if smoke else shape
    batch = SMOKE_BATCH if smoke else GPU_BATCH
    settings = learner_config(work / shape_name, source, device, gradient_checkpointing=True, torch_settings={"compile": compile_})
    reset_peak_memory(device)
    model = build_model(config, source, device, settings)
    learner = Learner(model, learner_options(settings))

    def request(seed: int) -> StepRequest:
        samples = rollout_samples(batch, config["vocab_size"], seed)
        examples = [TrainingExample(s["sample_id"], s["group_id"], s["prompt_token_ids"], s["completion_token_ids"], None, s["reward"], False) for s in samples]
        return StepRequest("grpo", {}, "rl", examples, num_generations=batch.completions_per_prompt, expected_samples=len(examples))

    started = time.perf_counter()
    learner.train_step(request(4))
    warmup_s = time.perf_counter() - started
    started = time.perf_counter()
    result = learner.train_step(request(5))
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - started
    if not math.isfinite(result.metrics["loss"]):
        raise AssertionError(f"loss is {result.metrics['loss']}")
    peak = peak_memory_gib(device)
    flops = grpo_step_flops(config, batch.sequences, reference=True)  # grpo defaults: beta 0.04
    return {
        "ok": True,
        "shape": shape_name if not smoke else f"tiny {shape_name}",
        "source": source,
        "gradient_checkpointing": True,
        "torch_compile": compile_,
        "warmup_seconds": round(warmup_s, 2),
        "seconds": round(seconds, 3),
        "tokens_per_second": round(sum(batch.sequences) / seconds, 1),
        "peak_gpu_memory_gib": peak,
        "fits_80gb": None if peak is None else peak <= BUDGET_GIB,
        "mfu": mfu(flops, seconds, device_name(device)),
        "loss": result.metrics["loss"],
        "grad_norm": result.metrics["grad_norm"],
        "micro_batch_tokens": learner.speed.micro_batch_tokens,
    }
