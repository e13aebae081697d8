"""Ranks other than 0: run each command rank 0 broadcasts on this rank's own Learner, until "stop".
Errors are the same on every rank (the batch was validated before the broadcast), so a worker
logs them and waits for the next command."""
from __future__ import annotations

import logging

from ..path_root import PathRoot

log = logging.getLogger("leangrpo_learner")


def run_worker(learner, collective, checkpoints: PathRoot) -> None:
    """`checkpoints` is this rank's checkpoint_dir: a load_checkpoint names a path under it, opened as rank 0 opens it."""
    while True:
        command, payload = collective.receive_command()
        if command == "stop":
            return
        try:
            if command == "train_step":
                learner.train_step(payload)
            elif command == "load_checkpoint":
                with checkpoints.open_directory(payload, "path") as directory:
                    learner.load_checkpoint(directory)
            elif command == "compute_logprobs":  # torch.sharding "fsdp": every rank joins each forward
                learner.compute_logprobs(*payload)
            else:
                log.error("rank %d: unknown command %r", collective.rank, command)
        except Exception:  # noqa: BLE001 - keep serving the next command
            log.exception("rank %d: %s failed", collective.rank, command)
