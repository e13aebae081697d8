"""Part 4: `torchrun --nproc-per-node 1 -m leangrpo_learner serve` on a GPU joins an NCCL process
group, serves gRPC, takes a TrainStep and stops on SIGTERM. The CPU smoke run launches the same
thing with gloo (NCCL needs a GPU), through tests/torchrun_compat.py where torch is 1.13."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch

from environment import LEARNER_ROOT, learner_config
from model_shapes import STEP_SHAPE, tiny
from random_model import write_random_model
from step_client import SMOKE_BATCH, rollout_samples, train_step

START_TIMEOUT_S = 240


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launcher() -> list[str]:
    if torch.__version__.startswith("1."):  # Debian's torch: torchrun needs the Python 3.11 fix
        return [sys.executable, str(LEARNER_ROOT / "tests" / "torchrun_compat.py")]
    return [sys.executable, "-m", "torch.distributed.run"]


def run(smoke: bool, device: torch.device, work: Path) -> dict:
    shape_name, shape = STEP_SHAPE
    config = tiny(shape) if smoke else shape
    model_dir = write_random_model(config, Path(tempfile.mkdtemp(dir=work)) / shape_name, seed=1, dtype="float32" if smoke else "bfloat16")
    settings = {"model": {"dir": str(model_dir)}, "lora": {"rank": 16, "alpha": 32}, "torch": {"device": device.type}}
    learner_config(model_dir, "native", device)  # the same keys, checked before launching
    command = launcher() + [
        "--nproc_per_node", "1", "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
        "-m", "leangrpo_learner", "serve", "--host", "127.0.0.1", "--port", "0", "--config-json", json.dumps(settings),
    ]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=LEARNER_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={"OMP_NUM_THREADS": "1", **_env()})
    stderr: list[str] = []
    threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True).start()
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT_S)
    try:
        if not line or not line[0].startswith("listening on "):
            raise AssertionError(f"torchrun did not start serving within {START_TIMEOUT_S} s: {line!r}; stderr: {''.join(stderr)[-2000:]}")
        start_s = time.perf_counter() - started
        address = line[0].split("listening on ", 1)[1].strip()
        samples = rollout_samples(SMOKE_BATCH, config["vocab_size"], seed=4)
        t = time.perf_counter()
        response = train_step(address, 1, SMOKE_BATCH, samples, timeout_s=300)
        step_s = time.perf_counter() - t
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            code = -9
    log = "".join(stderr)
    expected_device = "cuda" if device.type == "cuda" else "cpu"
    ready = f"rank 0/1 ready on {expected_device}" in log
    return {
        "ok": response.step == 1 and ready and code != -9,
        "backend": "nccl" if device.type == "cuda" else "gloo (CPU smoke; NCCL needs a GPU)",
        "shape": shape_name if not smoke else f"tiny {shape_name}",
        "start_seconds": round(start_s, 2),
        "step_seconds": round(step_s, 3),
        "step": response.step,
        "rank0_ready_logged": ready,
        # torchrun reports the SIGTERM it forwarded with exit 1; the ranks must end, not hang (-9).
        "torchrun_exit_code": code,
    }


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK")}
