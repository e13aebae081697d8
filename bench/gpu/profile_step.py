"""The former step (torch.former_step) and the fast step side by side on one model, in one process
(and, where torch has torch.compile, the fast step compiled, on a model of its own):
their bf16 parity (loss, gradient norm, updated LoRA weights, from the same starting adapter) and
a torch.profiler breakdown of one step of each (top kernels by time, kernel count, time outside
kernels, i.e. the device idle while Python, launches and copies run).

On CPU (the smoke run, float32) "kernels" are torch's CPU operators and the parity is float32's."""
from __future__ import annotations

import math
import time
from pathlib import Path

import torch

from environment import learner_config, peak_memory_gib, reset_peak_memory
from model_shapes import STEP_SHAPE, tiny
from random_model import random_weights
from step_client import GPU_BATCH, SMOKE_BATCH, rollout_samples

from leangrpo_learner.model.causal_lm import CausalLM
from leangrpo_learner.model.model_config import parse_model_config
from leangrpo_learner.model.model_source import base_dtype
from leangrpo_learner.rpc.learner_host import learner_options
from leangrpo_learner.training.learner import Learner, StepRequest
from leangrpo_learner.training.training_example import TrainingExample

TOP_KERNELS = 12
# bf16 (GPU): the former step's separate old-policy pass runs other batch shapes than the pass it
# is compared with, so its ratio is 1 ± bf16 noise where the fast step's is exactly 1; float32: rounding.
TOLERANCES = {
    "bfloat16": {"loss_abs": 2e-3, "loss_rel": 2e-2, "grad_norm_rel": 2e-2, "update_cosine_min": 0.99},
    "float32": {"loss_abs": 1e-6, "loss_rel": 1e-5, "grad_norm_rel": 1e-5, "update_cosine_min": 0.99999},
}


def request(batch, vocab: int, seed: int) -> StepRequest:
    samples = rollout_samples(batch, vocab, seed)
    examples = [TrainingExample(s["sample_id"], s["group_id"], s["prompt_token_ids"], s["completion_token_ids"], None, s["reward"], False) for s in samples]
    return StepRequest("grpo", {}, "rl", examples, num_generations=batch.completions_per_prompt, expected_samples=len(examples))


def kernel_breakdown(prof, wall_s: float, cuda: bool) -> dict:
    """Top kernels by their own time, how many ran, and the wall time not covered by them."""
    rows = []
    count, busy_us = 0, 0.0
    for event in prof.key_averages():
        if cuda:
            own = getattr(event, "self_device_time_total", None)
            own = own if own is not None else getattr(event, "self_cuda_time_total", 0.0)
            device_type = str(getattr(event, "device_type", ""))
            if own <= 0 or "CUDA" not in device_type:
                continue
        else:
            own = event.self_cpu_time_total
            if own <= 0:
                continue
        count += event.count
        busy_us += own
        rows.append({"name": event.key[:90], "calls": event.count, "ms": round(own / 1000, 2)})
    rows.sort(key=lambda r: -r["ms"])
    return {
        "wall_seconds": round(wall_s, 3),
        "kernel_seconds": round(busy_us / 1e6, 3),
        "outside_kernels_seconds": round(max(0.0, wall_s - busy_us / 1e6), 3),
        "kernel_count": count,
        "top": rows[:TOP_KERNELS],
        "what": "CUDA kernels" if cuda else "CPU operators (self time)",
    }


def profiled_step(learner: Learner, step: StepRequest, device: torch.device) -> tuple[dict, dict]:
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    reset_peak_memory(device)
    with profile(activities=activities) as prof:
        started = time.perf_counter()
        result = learner.train_step(step)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        wall = time.perf_counter() - started
    breakdown = kernel_breakdown(prof, wall, device.type == "cuda")
    breakdown["peak_gpu_memory_gib"] = peak_memory_gib(device)
    return breakdown, result.metrics


def update_cosine(after_a: dict, after_b: dict, before: dict) -> tuple[float, float]:
    """Cosine of the two updates (all LoRA tensors flattened) and their largest entrywise difference."""
    da = torch.cat([(after_a[k] - before[k]).reshape(-1).double() for k in before])
    db = torch.cat([(after_b[k] - before[k]).reshape(-1).double() for k in before])
    cosine = float(torch.dot(da, db) / (da.norm() * db.norm()).clamp(min=1e-300))
    return cosine, float((da - db).abs().max())


def compiled_profile(config: dict, batch, device: torch.device, dtype, model_dir: Path) -> dict:
    """The fast step with torch.compile on a model of its own (compiling is per model): a warm-up
    step pays the compilation, the profiled step follows."""
    model = CausalLM(parse_model_config(config), random_weights(config, seed=1, device=device.type, dtype=dtype), device, "random")
    learner = Learner(model, learner_options(learner_config(model_dir, "native", device, torch_settings={"compile": True})))
    learner.train_step(request(batch, config["vocab_size"], seed=4))
    profile, metrics = profiled_step(learner, request(batch, config["vocab_size"], seed=5), device)
    if not math.isfinite(metrics["loss"]):
        raise AssertionError(f"fast, torch.compile: loss is {metrics['loss']}")
    profile["micro_batches"] = metrics["micro_batches"]
    profile["micro_batch_tokens"] = learner.speed.micro_batch_tokens
    return profile


def run(smoke: bool, device: torch.device, work: Path) -> dict:
    shape_name, shape = STEP_SHAPE
    config = tiny(shape) if smoke else shape
    batch = SMOKE_BATCH if smoke else GPU_BATCH
    dtype = base_dtype(device)
    model = CausalLM(parse_model_config(config), random_weights(config, seed=1, device=device.type, dtype=dtype), device, "random")
    learners = {}
    for name, former in (("former", True), ("fast", False)):
        settings = learner_config(work / shape_name, "native", device, torch_settings={"former_step": former})
        learners[name] = Learner(model, learner_options(settings))
    start = learners["fast"].adapter.peft_tensors()
    first = {name: learner.train_step(request(batch, config["vocab_size"], seed=4)) for name, learner in learners.items()}
    after = {name: learner.adapter.peft_tensors() for name, learner in learners.items()}
    cosine, largest = update_cosine(after["fast"], after["former"], start)
    tolerance = TOLERANCES["bfloat16" if dtype == torch.bfloat16 else "float32"]
    loss_fast, loss_former = first["fast"].metrics["loss"], first["former"].metrics["loss"]
    norm_fast, norm_former = first["fast"].metrics["grad_norm"], first["former"].metrics["grad_norm"]
    parity = {
        "dtype": str(dtype).replace("torch.", ""),
        "loss": [loss_fast, loss_former],
        "grad_norm": [norm_fast, norm_former],
        "update_cosine": round(cosine, 6),
        "update_max_abs_difference": largest,
        "tolerance": tolerance,
        "within_tolerance": abs(loss_fast - loss_former) <= tolerance["loss_abs"] + tolerance["loss_rel"] * abs(loss_former)
        and abs(norm_fast - norm_former) <= tolerance["grad_norm_rel"] * abs(norm_former)
        and cosine >= tolerance["update_cosine_min"],
    }
    profiles = {}
    for name, learner in learners.items():
        profiles[name], metrics = profiled_step(learner, request(batch, config["vocab_size"], seed=5), device)
        if not math.isfinite(metrics["loss"]):
            raise AssertionError(f"{name}: loss is {metrics['loss']}")
        profiles[name]["micro_batches"] = metrics["micro_batches"]
        profiles[name]["micro_batch_tokens"] = learner.speed.micro_batch_tokens
    if hasattr(torch, "compile"):
        profiles["fast, torch.compile"] = compiled_profile(config, batch, device, dtype, work / shape_name)
    return {
        "ok": bool(parity["within_tolerance"]),
        "shape": shape_name if not smoke else f"tiny {shape_name}",
        "parity": parity,
        "profile": profiles,
        **({} if parity["within_tolerance"] else {"error": f"fast vs former step outside the {parity['dtype']} tolerance: {parity}"}),
    }
