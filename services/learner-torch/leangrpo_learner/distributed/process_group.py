"""The collective of a learner under torchrun (torch.distributed): micro-batches are dealt out
round-robin, and the LoRA gradients and metric sums are summed across ranks with one all-reduce.

Why a sum and not DistributedDataParallel's mean: each micro-batch's loss is already its share of
the whole step's loss (whole-batch denominators), so the step's gradient is the *sum* over ranks;
and ranks may hold different numbers of micro-batches (groups are never split), which DDP's
per-backward bucketed all-reduce cannot express. With LoRA only the adapter's gradients travel,
as DDP would send them: one flat float32 buffer per update (NCCL on GPU, gloo on CPU)."""
from __future__ import annotations

import torch
import torch.distributed as dist


class ProcessGroupCollective:
    def __init__(self, device: torch.device, lockstep: bool = False):
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self.is_main = self.rank == 0
        # torch.sharding "fsdp": every forward all-gathers, so every rank runs as many passes as the others.
        self.lockstep = lockstep
        # gloo reduces CPU tensors, NCCL CUDA tensors.
        self.device = device if dist.get_backend() == "nccl" else torch.device("cpu")

    def micro_batch_plan(self, count: int) -> list[tuple[int, bool]]:
        """(micro-batch, counts) this rank runs: round-robin. In lockstep a rank with no micro-batch in
        the last round runs that round's first one, its loss and sums not counted (multiplied by 0)."""
        plan = [(k, True) for k in range(self.rank, count, self.world_size)]
        if self.lockstep:
            rounds = -(-count // self.world_size)
            plan += [((rounds - 1) * self.world_size, False)] * (rounds - len(plan))
        return plan

    def sum_gradients(self, grads: list[torch.Tensor], scalars: list[float]) -> list[float]:
        flat = torch.cat(
            [g.detach().reshape(-1).to(self.device, torch.float32) for g in grads] + [torch.tensor(scalars, dtype=torch.float32, device=self.device)]
        )
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        offset = 0
        for g in grads:
            g.copy_(flat[offset : offset + g.numel()].view_as(g).to(g.device, g.dtype))
            offset += g.numel()
        return [float(v) for v in flat[offset:].to("cpu", torch.float64)]

    def min_over_ranks(self, value: int) -> int:
        box = torch.tensor([value], dtype=torch.int64, device=self.device)
        dist.all_reduce(box, op=dist.ReduceOp.MIN)
        return int(box.item())

    def gather_rows(self, rows: dict[int, list[float]]) -> dict[int, list[float]]:
        """Per-row values (batch row -> list) each rank computed for its micro-batches, merged on every rank."""
        gathered = [None] * self.world_size
        dist.all_gather_object(gathered, rows)
        merged: dict[int, list[float]] = {}
        for part in gathered:
            merged.update(part)
        return merged

    def send_command(self, command: str, payload) -> None:
        dist.broadcast_object_list([(command, payload)], src=0)

    def receive_command(self):
        box = [None]
        dist.broadcast_object_list(box, src=0)
        return box[0]


def init_process_group() -> torch.device:
    """Joins the torchrun group: NCCL with one GPU per local rank when CUDA is present, else gloo."""
    import os

    if torch.cuda.is_available():
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        return torch.device("cuda", local_rank)
    dist.init_process_group("gloo")
    return torch.device("cpu")
