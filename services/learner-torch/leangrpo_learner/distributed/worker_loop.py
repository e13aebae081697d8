"""Ranks other than 0: run each command rank 0 broadcasts on this rank's own Learner, until "stop".
Errors are the same on every rank (the batch was validated before the broadcast), so a worker
logs them and waits for the next command."""
from __future__ import annotations

import logging

log = logging.getLogger("leangrpo_learner")


def run_worker(learner, collective) -> None:
    while True:
        command, payload = collective.receive_command()
        if command == "stop":
            return
        try:
            if command == "train_step":
                learner.train_step(payload)
            elif command == "load_checkpoint":
                learner.load_checkpoint(payload)
            elif command == "compute_logprobs":  # torch.sharding "fsdp": every rank joins each forward
                learner.compute_logprobs(*payload)
            else:
                log.error("rank %d: unknown command %r", collective.rank, command)
        except Exception:  # noqa: BLE001 - keep serving the next command
            log.exception("rank %d: %s failed", collective.rank, command)
