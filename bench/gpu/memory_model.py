"""What one GPU holds during a GRPO step, by model shape, sharding and micro-batch: an estimate from
the shapes alone (the same activation estimate the learner's "auto" token budget uses), to plan
how a model lays out across GPUs before renting them.

    python bench/gpu/memory_model.py            # the 0.5B … 72B shapes on 1 and 8 GPUs

Per GPU: the frozen decoder layers in bf16 (whole, or 1/world of them with torch.sharding "fsdp",
plus the two layers FSDP2 holds gathered at once: the one running and the one prefetched); the
embeddings, final norm and head whole (fsdp leaves them unsharded); the LoRA adapter in float32
with its gradient, AdamW's two moments and the all-reduce buffer (16 + 4 bytes per parameter);
the activations autograd keeps for one micro-batch; the vocabulary projection's chunk (its
backward holds ~4 float32 copies). Not counted: the CUDA context and cuBLAS/NCCL workspaces
(~1-3 GiB) and allocator fragmentation."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from environment import ALL_LINEAR  # noqa: E402
from model_shapes import QWEN25_05B, QWEN25_7B, QWEN25_32B, QWEN25_72B  # noqa: E402

from leangrpo_learner.model.linear_modules import expected_weights, linear_features  # noqa: E402
from leangrpo_learner.model.model_config import parse_model_config  # noqa: E402
from leangrpo_learner.training.step_speed import GPU_LOGITS_CHUNK_MIB, DecoderDims, activation_bytes_per_token  # noqa: E402

GIB = 1 << 30
SHAPES = {"qwen2.5-0.5b": QWEN25_05B, "qwen2.5-7b": QWEN25_7B, "qwen2.5-32b": QWEN25_32B, "qwen2.5-72b": QWEN25_72B}


@dataclass(frozen=True)
class Estimate:
    layers_gib: float
    gathered_gib: float
    embeddings_and_head_gib: float
    lora_and_adamw_gib: float
    activations_gib: float
    logits_gib: float

    @property
    def total_gib(self) -> float:
        return self.layers_gib + self.gathered_gib + self.embeddings_and_head_gib + self.lora_and_adamw_gib + self.activations_gib + self.logits_gib


def per_gpu(config: dict, world: int, sharded: bool, micro_batch_tokens: int, gradient_checkpointing: bool, rank: int = 16) -> Estimate:
    c = parse_model_config(config)
    shapes = expected_weights(c)
    layer_elements = sum(_numel(s) for name, s in shapes.items() if name.startswith("model.layers."))
    other_elements = sum(_numel(s) for name, s in shapes.items() if not name.startswith("model.layers."))
    lora_elements = c.num_layers * sum(rank * sum(linear_features(c, m)) for m in ALL_LINEAR)
    dims = DecoderDims(c.hidden_size, c.intermediate_size, c.num_layers, c.num_kv_heads * c.head_dim)
    one_layer = layer_elements / c.num_layers
    return Estimate(
        layers_gib=2 * layer_elements / (world if sharded else 1) / GIB,
        gathered_gib=(2 * 2 * one_layer / GIB) if sharded and world > 1 else 0.0,
        embeddings_and_head_gib=2 * other_elements / GIB,
        lora_and_adamw_gib=20 * lora_elements / GIB,
        activations_gib=activation_bytes_per_token(dims, gradient_checkpointing) * micro_batch_tokens / GIB,
        logits_gib=4 * GPU_LOGITS_CHUNK_MIB / 1024,
    )


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def main() -> None:
    group_tokens = 8 * (128 + 512)  # one group of the bench's batch: the smallest micro-batch (groups are never split)
    print(f"per-GPU estimate, GiB (micro-batch {group_tokens} tokens = one group of 8 × 640, LoRA r16 on 7 linears)")
    columns = ("layers", "gathered", "emb+head", "LoRA+Adam", "activ.", "logits", "total")
    print(f"{'shape':<14} {'GPUs':>4} {'sharding':<8} {'gc':<5} " + " ".join(f"{c:>9}" for c in columns))
    for name, config in SHAPES.items():
        for world, sharded, gc in ((1, False, False), (1, False, True), (8, True, True)):
            e = per_gpu(config, world, sharded, group_tokens, gc)
            values = (e.layers_gib, e.gathered_gib, e.embeddings_and_head_gib, e.lora_and_adamw_gib, e.activations_gib, e.logits_gib, e.total_gib)
            print(f"{name:<14} {world:>4} {'fsdp' if sharded else 'none':<8} {str(gc):<5} " + " ".join(f"{v:>9.1f}" for v in values))


if __name__ == "__main__":
    main()
