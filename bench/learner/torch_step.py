"""The bench model's training step in PyTorch, the baseline of bench/learner/main.ts.

    /usr/bin/python3 bench/learner/torch_step.py SPEC_JSON

SPEC_JSON (from main.ts) gives the config, batch, lengths, LoRA and step counts.
The model is scripts/reference/reference_model.py (the parity reference) with
random weights; the step is the same as the TypeScript one: completion-token
logprobs, loss −mean(advantage · logp), backward into the LoRA tensors, Adam.
Prints one JSON line: milliseconds per step and what BLAS torch is using.
"""

import json
import os
import sys
import time

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "reference"))
import reference_model as ref  # noqa: E402


def main():
    spec = json.loads(sys.argv[1])
    # One torch thread; OpenBLAS takes OPENBLAS_NUM_THREADS (set by main.ts). Two torch
    # threads on top of two BLAS threads oversubscribe two cores (learner-facts §2).
    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = ref.Config(spec["config"])
    shapes = ref.module_shapes(cfg)
    weights = {"model.embed_tokens.weight": torch.randn(cfg.vocab, cfg.hidden) * 0.02, "model.norm.weight": torch.ones(cfg.hidden)}
    for i in range(cfg.layers):
        p = f"model.layers.{i}"
        weights[p + ".input_layernorm.weight"] = torch.ones(cfg.hidden)
        weights[p + ".post_attention_layernorm.weight"] = torch.ones(cfg.hidden)
        for module, group in ref.LORA_MODULES.items():
            fan_in, fan_out = shapes[module]
            weights[f"{p}.{group}.{module}.weight"] = torch.randn(fan_out, fan_in) * 0.02
        for module in ("q_proj", "k_proj", "v_proj"):
            weights[f"{p}.self_attn.{module}.bias"] = torch.zeros(shapes[module][1])
    lora_settings = ref.LoraSettings(spec["rank"], spec["alpha"], spec["targets"])
    lora = {}
    for i in range(cfg.layers):
        for module in lora_settings.targets:
            fan_in, fan_out = shapes[module]
            lora[ref.lora_key(i, module, "A")] = (torch.rand(spec["rank"], fan_in) * 2 - 1).div(fan_in**0.5).requires_grad_(True)
            lora[ref.lora_key(i, module, "B")] = torch.zeros(fan_out, spec["rank"]).requires_grad_(True)
    model = ref.CausalLM(cfg, weights, lora_settings, lora)
    optimizer = torch.optim.Adam(list(lora.values()), lr=1e-4)

    generator = torch.Generator().manual_seed(1)
    batch, prompt, completion = spec["batch"], spec["prompt_tokens"], spec["completion_tokens"]
    ids = torch.randint(0, cfg.vocab, (batch, prompt + completion), generator=generator)
    mask = torch.ones_like(ids)
    advantages = torch.randn(batch, 1, generator=generator)

    def step():
        optimizer.zero_grad()
        logits = model.logits(ids, mask)[:, prompt - 1 : -1]
        logp = torch.log_softmax(logits, dim=-1).gather(-1, ids[:, prompt:, None])[..., 0]
        loss = -(advantages * logp).mean()
        loss.backward()
        optimizer.step()

    for _ in range(spec["warmup_steps"]):
        step()
    times = []
    for _ in range(spec["steps"]):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    print(json.dumps({"torch": torch.__version__, "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "blas": blas, "step_ms": times}))


if __name__ == "__main__":
    main()
