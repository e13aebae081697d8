"""Model FLOPs of one GRPO step and model-FLOPs utilisation (MFU), counted the usual way
(PaLM appendix B; what TRL/verl dashboards report): matmul FLOPs only, recomputation from
gradient checkpointing not counted (that would be hardware FLOPs)."""
from __future__ import annotations

from leangrpo_learner.model.linear_modules import expected_weights
from leangrpo_learner.model.model_config import parse_model_config

# Dense bf16 tensor-core peak, TFLOP/s, by the name torch reports (SXM parts; PCIe H100 is 756).
PEAK_BF16_TFLOPS = {"H100": 989.4, "H200": 989.4, "A100": 312.0, "B200": 2250.0}


def forward_flops(config: dict, sequences: list[int]) -> float:
    """2·(matmul weights incl. the LM head) per token, plus causal attention (QKᵀ and AV, half the square)."""
    c = parse_model_config(config)
    shapes = expected_weights(c)
    matmul = sum(s[0] * s[1] for name, s in shapes.items() if len(s) == 2 and name != "model.embed_tokens.weight")
    if c.tie_word_embeddings:
        matmul += c.vocab_size * c.hidden_size  # the tied head still multiplies
    tokens = sum(sequences)
    attention = sum(2 * c.num_layers * (n * n / 2) * 2 * c.num_heads * c.head_dim for n in sequences)
    return 2 * matmul * tokens + attention


def grpo_step_flops(config: dict, sequences: list[int], iterations: int = 1, reference: bool = True, old_pass: bool = False) -> float:
    """The work a step must do, the same count for every arm: with a KL term (grpo's default beta
    0.04) the reference logprobs (one forward without grad), then per iteration a forward and a
    backward to the activations (≈ one more forward: the frozen base needs no weight gradients,
    LoRA's are tiny). An old-policy pass is counted only where the step needs one (replayed
    iterations): with one on-policy update neither TRL nor this learner makes it."""
    f = forward_flops(config, sequences)
    return f * (int(reference) + int(old_pass)) + iterations * 2 * f


def mfu(flops: float, seconds: float, device_name: str) -> float | None:
    peak = next((tflops for key, tflops in PEAK_BF16_TFLOPS.items() if key in device_name), None)
    if peak is None or seconds <= 0:
        return None
    return round(flops / seconds / (peak * 1e12), 4)
