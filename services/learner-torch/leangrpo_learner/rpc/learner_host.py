"""Holds the service's Learner: loaded on first use from model.dir (so the service starts, and
answers health and ListAlgorithms, on a machine with no model), and shared by every RPC under one
lock (a step mutates the weights everything else reads). Under torch.distributed the model is
loaded at start and operations that change state are broadcast to the other ranks first."""
from __future__ import annotations

import logging
import threading

import grpc
import torch

from ..lora.lora_config import LoraConfig
from ..model.model_source import load_model
from ..optimizer.adamw import AdamWSettings
from ..training.learner import Learner, LearnerOptions, OptimizerOptions
from ..training.step_speed import StepSpeedSettings
from .status_codes import RpcAbort

log = logging.getLogger("leangrpo_learner")


def learner_options(config: dict) -> LearnerOptions:
    o, lora = config["optimizer"], config["lora"]
    return LearnerOptions(
        base_model=base_model_of(config),
        lora=LoraConfig(lora["rank"], lora["alpha"], tuple(lora["target_modules"]), lora["dropout"], lora["use_rslora"]),
        optimizer=OptimizerOptions(
            AdamWSettings(o["learning_rate"], o["beta1"], o["beta2"], o["epsilon"], o["weight_decay"]),
            o["max_grad_norm"],
            o["lr_schedule"],
            o["warmup_steps"],
            o["total_steps"],
        ),
        micro_batch_tokens=config["micro_batch_tokens"],
        seed=config["seed"],
        keep_versions=config["adapter_versions_kept"],
        gradient_checkpointing=config["torch"]["gradient_checkpointing"],
        speed=StepSpeedSettings(
            config["torch"]["micro_batch_tokens"], config["torch"]["logits_chunk_mib"], config["torch"]["former_step"], config["torch"]["compile"]
        ),
        reasoning_rows=config.get("reasoning_rows", "train"),
    )


def base_model_of(config: dict) -> str:
    return config["model"]["name"] or config["model"]["dir"] or ""


def load_learner(config: dict, device: torch.device, collective=None) -> Learner:
    options = learner_options(config)
    if config["torch"]["sharding"] == "fsdp":
        from ..distributed.fsdp import load_sharded_native
        from ..model.model_source import base_dtype

        model = load_sharded_native(config["model"]["dir"], device, base_dtype(device, config["torch"]["dtype"]))
    else:
        model = load_model(config, options.lora, device)
    return Learner(model, options, collective)


class LearnerHost:
    def __init__(self, config: dict, device: torch.device, collective=None, learner: Learner | None = None):
        self.config = config
        self.device = device
        self.collective = collective
        self.lock = threading.Lock()
        self._learner = learner
        # Sharded ranks gather every layer in every forward: scoring must run on all of them too.
        self.sharded = config["torch"]["sharding"] == "fsdp"

    @property
    def base_model(self) -> str:
        return base_model_of(self.config)

    @property
    def current(self) -> Learner | None:
        return self._learner

    def learner(self) -> Learner:
        """The learner (loading it on first use); call with the lock held."""
        directory = self.config["model"]["dir"]
        if not directory:
            raise RpcAbort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "the learner has no model: set model.dir to a Hugging Face model directory (config.json + model.safetensors), "
                "e.g. model.dir=/models/Qwen2.5-0.5B",
            )
        if self._learner is None:
            try:
                self._learner = load_learner(self.config, self.device, self.collective)
            except Exception as error:  # noqa: BLE001 - any load failure is the model dir's
                raise RpcAbort(grpc.StatusCode.FAILED_PRECONDITION, f'model.dir "{directory}" could not be loaded: {error}') from None
            log.info("loaded %s on %s", directory, self.device)
        return self._learner

    def broadcast(self, command: str, payload) -> None:
        """Sends a state-changing command to the other ranks before rank 0 runs it."""
        if self.collective is not None and self.collective.world_size > 1:
            self.collective.send_command(command, payload)
