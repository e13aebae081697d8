"""Under torchrun every rank loads a checkpoint itself: rank 0 sends the path the client gave, and
each rank opens it under its own checkpoint_dir (path_root.py), so a symlink planted there is refused
on every rank, not followed. The commands come as torch.distributed would deliver them."""
import logging
import os

import torch

from batches import TINY_CONFIG
from conftest import LM_FIXTURES
from leangrpo_learner.config import load_config
from leangrpo_learner.distributed.worker_loop import run_worker
from leangrpo_learner.path_root import PathRoot
from leangrpo_learner.rpc.learner_host import load_learner


class ReplayedCommands:
    """The commands rank 0 would broadcast, in order (the collective's receiving side)."""

    rank = 1

    def __init__(self, commands):
        self.commands = list(commands)

    def receive_command(self):
        return self.commands.pop(0)


def learner():
    return load_learner(load_config({**TINY_CONFIG, "model": {"dir": str(LM_FIXTURES / "qwen2-tiny")}}), torch.device("cpu"))


def test_a_worker_opens_the_checkpoint_under_its_own_checkpoint_dir_and_refuses_a_symlink(tmp_path, caplog):
    root = PathRoot(str(tmp_path / "checkpoints"), "checkpoint_dir")
    saver = learner()
    saver.step, saver.adapter_version = 5, 5
    with root.open_directory("ck", "path", create=True) as directory:
        saver.save_checkpoint(directory)
    os.symlink(tmp_path / "checkpoints" / "ck", tmp_path / "checkpoints" / "linked")

    worker = learner()
    with caplog.at_level(logging.ERROR, logger="leangrpo_learner"):
        run_worker(worker, ReplayedCommands([("load_checkpoint", "linked"), ("stop", None)]), root)
    assert worker.step == 0
    assert 'path "linked" is a symlink; symlinks inside checkpoint_dir are refused' in caplog.text

    run_worker(worker, ReplayedCommands([("load_checkpoint", "ck"), ("stop", None)]), root)
    assert (worker.step, worker.adapter_version) == (5, 5)
