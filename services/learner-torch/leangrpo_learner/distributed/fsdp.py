"""torch.sharding "fsdp": the frozen base's decoder layers sharded across the torchrun ranks with
FSDP2 (`fully_shard`, torch >= 2.4), so a model larger than one GPU can be trained.

Each decoder layer's frozen weights become the parameters of one small module that FSDP2 shards
(each rank keeps 1/world of them); its forward all-gathers the layer, runs the native layer code
and frees the gathered copy again, and the backward gathers it once more (FSDP2's hooks), as
PyTorch's recipe wraps each transformer block. Gradient checkpointing runs inside the wrapped
module, the order PyTorch recommends. The embeddings, final norm and head stay whole on every
rank (a vocabulary projection split across ranks would need its own collectives).

The LoRA adapter stays replicated (PyTorch's recommendation for parameters this small): its
gradients are summed across ranks with the one all-reduce the data-parallel path already makes,
so AdamW, checkpoints and the PEFT export are unchanged and rank 0 gathers nothing to export.

Because every forward all-gathers, the ranks must run their passes in lockstep: micro-batches are
dealt in rounds of one per rank, and a rank without one in the last round runs the round's first
micro-batch with its loss multiplied by 0 (ProcessGroupCollective.micro_batch_plan); scoring
(ComputeLogprobs) is broadcast to every rank like a step."""
from __future__ import annotations

import torch
from torch import nn

from ..config import ConfigError


def fully_shard_function():
    """torch's FSDP2 entry point, or a ConfigError naming torch.sharding where torch lacks it."""
    # Not only ImportError: torch 1.13's FSDP1 package fails to import on Python 3.11 (ValueError).
    try:
        from torch.distributed.fsdp import fully_shard  # torch >= 2.6

        return fully_shard
    except Exception:  # noqa: BLE001
        pass
    try:
        from torch.distributed._composable.fsdp import fully_shard  # torch 2.4, 2.5

        return fully_shard
    except Exception:  # noqa: BLE001
        raise ConfigError(
            f'config key "torch.sharding" is "fsdp" but torch {torch.__version__} has no FSDP2 fully_shard (torch >= 2.4 has); accepted here: "none"'
        ) from None


class ShardedLayer(nn.Module):
    """One decoder layer's frozen weights as parameters FSDP2 can shard; forward runs the native
    layer with the gathered weights."""

    def __init__(self, model, layer: int, names: list[str]):
        super().__init__()
        self.model = [model]  # a list: the model is not a submodule (its weights are these parameters)
        self.layer = layer
        self.names = names
        for i, name in enumerate(names):
            self.register_parameter(f"w{i}", nn.Parameter(model.weights[name], requires_grad=False))

    def forward(self, h, cos, sin, bias, options):
        model = self.model[0]
        # Inside forward FSDP2 has swapped in the gathered (unsharded) tensors: the layer reads those.
        for i, name in enumerate(self.names):
            model.weights[name] = getattr(self, f"w{i}")
        if options.gradient_checkpointing and torch.is_grad_enabled():
            from torch.utils.checkpoint import checkpoint

            return checkpoint(model._layer, self.layer, h, cos, sin, bias, options, use_reentrant=False)
        return model._layer(self.layer, h, cos, sin, bias, options)


def shard_native_model(model, device: torch.device) -> list[ShardedLayer]:
    """Shards every decoder layer of a native CausalLM over the default process group; returns the
    wrapped layers, which the model then calls in place of its own layer code."""
    fully_shard = fully_shard_function()
    from torch.distributed.device_mesh import init_device_mesh
    import torch.distributed as dist

    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    layers = []
    for layer in range(model.config.num_layers):
        prefix = f"model.layers.{layer}."
        names = sorted(n for n in model.weights if n.startswith(prefix))
        module = ShardedLayer(model, layer, names)
        fully_shard(module, mesh=mesh, reshard_after_forward=True)
        layers.append(module)
        for i, name in enumerate(names):  # the whole tensors are let go: the dict holds the shards
            model.weights[name] = getattr(module, f"w{i}")
    return layers


def load_sharded_native(directory, device: torch.device, dtype: torch.dtype):
    """A native CausalLM read on the CPU, its decoder layers sharded onto `device` (each rank keeps
    its shards), the rest (embeddings, final norm, head) moved there whole."""
    from ..model.causal_lm import CausalLM

    # Unpacked: FSDP shards tensors by name, and views into one packed matrix would each gather it whole.
    model = CausalLM.load(directory, device="cpu", dtype=dtype, pack=False)
    model.sharded_layers = shard_native_model(model, device)
    for name, tensor in model.weights.items():
        if not name.startswith("model.layers."):
            model.weights[name] = tensor.to(device)
    model.device = device
    model.head = model.weights["model.embed_tokens.weight"] if model.config.tie_word_embeddings else model.weights["lm_head.weight"]
    model.inv_freq = model.inv_freq.to(device)
    return model


def check_sharding(config: dict, distributed: bool) -> None:
    """What torch.sharding "fsdp" needs, checked at start: torchrun, the native source, FSDP2."""
    if config["torch"]["sharding"] != "fsdp":
        return
    if not distributed:
        raise ConfigError(
            'config key "torch.sharding" is "fsdp" but the learner was not launched by torchrun; '
            'fsdp shards the model across torchrun\'s ranks (torchrun --nproc-per-node N ...), or use "none"'
        )
    if config["torch"]["model_source"] != "native":
        raise ConfigError(
            'config key "torch.sharding" is "fsdp" with torch.model_source "transformers"; '
            'fsdp shards the native model\'s decoder layers (accepted with "transformers": "none")'
        )
    fully_shard_function()
