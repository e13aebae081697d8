"""Part 2: one GRPO TrainStep through gRPC on the Qwen2.5-0.5B shape (16 prompts × 8 completions ×
512 completion tokens, LoRA r16 on every linear): seconds, tokens/s, peak GPU memory and MFU, for
one model source with or without gradient checkpointing (the check runs each combination in its
own process, so peaks are the combination's own).

The server is the learner's own (rpc.server.start_server with a LearnerHost, as `serve` starts
it) on a loopback port, and the model loads from a directory on first use, as in production. A
warm-up step (model load, CUDA kernels, allocator, and with torch.compile the compilation) is
not timed; the timed steps follow it."""
from __future__ import annotations

import gc
import math
import tempfile
import time
from pathlib import Path

import torch

from environment import device_name, learner_config, peak_memory_gib, reset_peak_memory
from flops import grpo_step_flops, mfu
from model_shapes import STEP_SHAPE, tiny
from random_model import write_random_model
from step_client import GPU_BATCH, SMOKE_BATCH, rollout_samples, train_step

from leangrpo_learner.rpc.learner_host import LearnerHost
from leangrpo_learner.rpc.server import start_server


def run(
    smoke: bool,
    device: torch.device,
    work: Path,
    source: str,
    gradient_checkpointing: bool,
    timed_steps: int = 2,
    compile_: bool = False,
    micro_batch_settings: list | None = None,
) -> dict:
    """One model directory; for each torch.micro_batch_tokens setting (default: "auto" alone) a
    fresh server, a warm-up step and the timed steps. The result's figures are the fastest
    setting's; `settings` lists each (the comparison may pick one that fits a memory bound)."""
    shape_name, shape = STEP_SHAPE
    config = tiny(shape) if smoke else shape
    batch = SMOKE_BATCH if smoke else GPU_BATCH
    # Stored in bf16 on a GPU, as checkpoints ship; the learner keeps them bf16 there.
    model_dir = write_random_model(config, Path(tempfile.mkdtemp(dir=work)) / shape_name, seed=1, dtype="float32" if smoke else "bfloat16")
    flops = grpo_step_flops(config, batch.sequences, reference=True)  # grpo defaults: beta 0.04
    tokens = sum(batch.sequences)
    settings = []
    for micro_batch in micro_batch_settings or ["auto"]:
        measured = one_setting(model_dir, source, device, gradient_checkpointing, compile_, micro_batch, batch, config["vocab_size"], timed_steps)
        seconds = min(s["seconds"] for s in measured["steps"])
        settings.append(
            {
                **measured,
                "micro_batch_setting": micro_batch,
                "seconds": seconds,
                "tokens_per_second": round(tokens / seconds, 1),
                "mfu": mfu(flops, seconds, device_name(device)),
            }
        )
    best = min(settings, key=lambda r: r["seconds"])
    return {
        "ok": True,
        "shape": shape_name if not smoke else f"tiny {shape_name}",
        "source": source,
        "gradient_checkpointing": gradient_checkpointing,
        "torch_compile": compile_,
        "batch": f"{batch.prompts} prompts × {batch.completions_per_prompt} completions × {batch.completion_tokens} tokens (prompts {batch.prompt_tokens})",
        "algorithm": "grpo, default settings (beta 0.04: a reference pass too)",
        "model_tflops_per_step": float(f"{flops / 1e12:.4g}"),
        **best,
        "settings": settings,
        "target_seconds": None if smoke else 10.0,  # check.py's goal for this step
    }


def one_setting(model_dir: Path, source: str, device, gradient_checkpointing: bool, compile_: bool, micro_batch, batch, vocab: int, timed_steps: int) -> dict:
    learner_settings = learner_config(
        model_dir,
        source,
        device,
        gradient_checkpointing=gradient_checkpointing,
        torch_settings={"compile": compile_, "micro_batch_tokens": micro_batch},
        server={"host": "127.0.0.1", "port": 0},
    )
    host = LearnerHost(learner_settings, device)
    server, port, _ = start_server(learner_settings, host)
    address = f"127.0.0.1:{port}"
    try:
        started = time.perf_counter()
        train_step(address, 0, batch, rollout_samples(batch, vocab, seed=4), timeout_s=600)
        warmup_s = time.perf_counter() - started
        reset_peak_memory(device)
        steps = []
        for i in range(timed_steps):
            started = time.perf_counter()
            response = train_step(address, 0, batch, rollout_samples(batch, vocab, seed=5 + i), timeout_s=600)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            seconds = time.perf_counter() - started
            loss = response.metrics["loss"]
            if not math.isfinite(loss):
                raise AssertionError(f"step {response.step}: loss is {loss}")
            steps.append({"seconds": round(seconds, 3), "loss": loss, "grad_norm": response.metrics.get("grad_norm")})
        peak = peak_memory_gib(device)
        resolved = host.current.speed.micro_batch_tokens
    finally:
        server.stop(0).wait()
        del host
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return {"micro_batch_tokens": resolved, "warmup_seconds_incl_load": round(warmup_s, 2), "steps": steps, "peak_gpu_memory_gib": peak}
