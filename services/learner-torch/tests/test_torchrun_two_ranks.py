"""torchrun (underscore flags: torch 1.13 knows only those; newer torch accepts both) with 2 CPU ranks (gloo):
rank 0 serves, both compute their share of every step; after 3 TrainSteps the exported adapter equals the single-process learner's within 1e-5."""
import socket
import sys
from pathlib import Path

import torch

from batches import TINY_CONFIG, rollout_batch
from conftest import LM_FIXTURES
from leangrpo_learner import safetensors_io
from server_process import LearnerProcess

CONFIG = {**TINY_CONFIG, "model": {"dir": str(LM_FIXTURES / "qwen2-tiny")}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun_launcher(ranks: int) -> list[str]:
    """torchrun (through the torch 1.13 fix in torchrun_compat.py) with `ranks` local processes on a free port."""
    return [
        sys.executable,
        str(Path(__file__).with_name("torchrun_compat.py")),
        "--nproc_per_node",
        str(ranks),
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        str(free_port()),
    ]


def three_steps(process: LearnerProcess) -> dict[str, torch.Tensor]:
    micro_batches = []
    for step in range(1, 4):
        response = process.train_step(dict(algorithm="dgpo", step=step), rollout_batch(shift=step))
        micro_batches.append(response.metrics["micro_batches"])
    assert min(micro_batches) >= 2  # both ranks had work
    _, files = process.export_adapter()
    return safetensors_io.load_bytes(files["adapter_model.safetensors"])


def test_two_gloo_ranks_give_the_single_process_adapter():
    single = LearnerProcess(CONFIG)
    try:
        expected = three_steps(single)
    finally:
        assert single.stop() == 0
    launcher = torchrun_launcher(2)
    ranks = LearnerProcess(CONFIG, launcher=launcher, env={"OMP_NUM_THREADS": "1"})
    try:
        got = three_steps(ranks)
    finally:
        # torchrun itself exits 1 on SIGTERM (it reports the signal); the ranks must still end, not hang.
        assert ranks.stop() != -9
    assert set(got) == set(expected)
    moved = 0.0
    for key, tensor in expected.items():
        assert float((got[key] - tensor).abs().max()) <= 1e-5, key
        moved = max(moved, float(tensor.abs().max()))
    assert moved > 0
