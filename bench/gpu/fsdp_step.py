"""torch.sharding "fsdp" on the device: `torchrun --nproc-per-node N` (1 on a GPU, NCCL; 2 on CPU,
gloo) runs this file; every rank loads the same model twice, once sharded with FSDP2 and once
whole, makes the same GRPO steps with both (float32, so the comparison is exact up to rounding)
and rank 0 reports the largest adapter difference. The part itself (run) writes the model and
launches torchrun."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

TOLERANCE = 1e-5
SHAPE_BATCH = dict(prompts=2, completions_per_prompt=4, completion_tokens=64, prompt_tokens=32)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(smoke: bool, device, work: Path) -> dict:
    import torch

    from environment import learner_config
    from model_shapes import STEP_SHAPE, tiny
    from random_model import write_random_model

    from leangrpo_learner.distributed.fsdp import check_sharding

    try:
        check_sharding(learner_config(work, "native", device, torch_settings={"sharding": "fsdp"}), distributed=True)
    except ValueError as error:
        return {"ok": None, "skipped_reason": str(error)}
    shape_name, shape = STEP_SHAPE
    model_dir = write_random_model(tiny(shape) if smoke else shape, Path(tempfile.mkdtemp(dir=work)) / shape_name, seed=1, dtype="float32")
    ranks = 2 if smoke else 1
    out = work / "fsdp-result.json"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        str(ranks),
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        str(_free_port()),
        str(Path(__file__).resolve()),
        str(model_dir),
        str(out),
        device.type,
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=600)
    if done.returncode != 0 or not out.exists():
        return {"ok": False, "error": f"torchrun exited {done.returncode}", "output_tail": (done.stdout + done.stderr)[-3000:]}
    result = json.loads(out.read_text())
    result["torchrun_seconds"] = round(time.perf_counter() - started, 2)
    result["torch"] = torch.__version__
    return result


def rank_main(model_dir: str, out: str, device_type: str) -> None:
    import torch
    import torch.distributed as dist

    from environment import learner_config
    from step_client import BatchShape, rollout_samples

    from leangrpo_learner.distributed.process_group import ProcessGroupCollective, init_process_group
    from leangrpo_learner.rpc.learner_host import load_learner
    from leangrpo_learner.training.learner import StepRequest
    from leangrpo_learner.training.training_example import TrainingExample

    device = init_process_group()
    collective = ProcessGroupCollective(device, lockstep=True)
    batch = BatchShape(**SHAPE_BATCH)
    learners = {}
    for sharding in ("fsdp", "none"):
        config = learner_config(Path(model_dir), "native", device, dtype="float32", torch_settings={"sharding": sharding, "micro_batch_tokens": 512})
        learners[sharding] = load_learner(config, device, collective if sharding == "fsdp" else None)
    vocab = learners["none"].model.config.vocab_size
    seconds = {}
    for step in range(2):
        samples = rollout_samples(batch, vocab, seed=10 + step)
        examples = [TrainingExample(s["sample_id"], s["group_id"], s["prompt_token_ids"], s["completion_token_ids"], None, s["reward"], False) for s in samples]
        for name, learner in learners.items():
            started = time.perf_counter()
            result = learner.train_step(StepRequest("grpo", {}, "rl", examples, num_generations=batch.completions_per_prompt, expected_samples=len(examples)))
            seconds.setdefault(name, []).append(round(time.perf_counter() - started, 3))
    sharded, whole = learners["fsdp"].adapter.peft_tensors(), learners["none"].adapter.peft_tensors()
    difference = max(float((sharded[k] - whole[k]).abs().max()) for k in whole)
    layer0 = learners["fsdp"].model.sharded_layers[0]
    local = sum(p.to_local().numel() for p in layer0.parameters())
    full = sum(p.numel() for p in layer0.parameters())
    if collective.is_main:
        Path(out).write_text(
            json.dumps(
                {
                    "ok": difference <= TOLERANCE,
                    "world_size": collective.world_size,
                    "backend": dist.get_backend(),
                    "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
                    "max_abs_difference": difference,
                    "tolerance": TOLERANCE,
                    "layer0_elements_on_rank0": local,
                    "layer0_elements": full,
                    "step_seconds": seconds,
                    "loss": result.metrics["loss"],
                    **({} if difference <= TOLERANCE else {"error": f"sharded adapter differs from the unsharded one by {difference:.3g}"}),
                }
            )
        )
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    rank_main(*sys.argv[1:4])
