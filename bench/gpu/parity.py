"""Part 1: the learner's per-token logprobs (both model sources) against plain transformers + peft,
on random models with real models' shapes, fp32 and bf16, with and without a LoRA adapter.

The comparator is what a user would write: AutoModelForCausalLM.from_pretrained on the same
directory, the learner's *exported* adapter files loaded with PeftModel.from_pretrained (so the
PEFT key names and adapter_config.json are checked too), logits → log_softmax → the completion
tokens. Batches are left-padded with completions of different lengths, and position ids count
real tokens, as the sampler saw them.

Tolerances: fp32, max |Δ logprob| ≤ 1e-4 (the issue's target). bf16 has no single right answer
(plain transformers in bf16 is itself off from fp32), so a bf16 row passes when the learner's
error against the fp32 comparator is at most 2 × plain transformers' own bf16 error + 1e-2.
Where transformers is not installed (CI), the comparator is scripts/reference (an independent
float32 implementation) and only the native source runs."""
from __future__ import annotations

import random
import tempfile
from pathlib import Path

import torch

from environment import ALL_LINEAR, learner_config, sources
from model_shapes import PARITY_SHAPES, tiny
from random_model import random_adapter, write_random_model

from leangrpo_learner.completion_logprobs import left_padded
from leangrpo_learner.lora.peft_files import export_peft_files, save_peft_files
from leangrpo_learner.rpc.learner_host import load_learner
from leangrpo_learner.sampling import SamplingDistribution

FP32_TOLERANCE = 1e-4


def sample_pairs(vocab: int, count: int, longest: int, seed: int) -> list[tuple[list[int], list[int]]]:
    rng = random.Random(seed)
    pairs = []
    for i in range(count):
        prompt = [rng.randrange(vocab) for _ in range(rng.randint(longest // 8, longest // 4))]
        completion = [rng.randrange(vocab) for _ in range(max(1, longest // 2 - i * longest // (4 * count)))]
        pairs.append((prompt, completion))
    return pairs


def transformers_logprobs(model_dir: Path, adapter_dir: Path | None, dtype: torch.dtype, device, pairs) -> list[list[float]]:
    from peft import PeftModel, get_peft_model_state_dict
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=dtype, attn_implementation="sdpa").to(device).eval()
    if adapter_dir is not None:
        model = PeftModel.from_pretrained(model, str(adapter_dir)).eval()
        from leangrpo_learner import safetensors_io

        saved = set(safetensors_io.load_file(adapter_dir / "adapter_model.safetensors"))
        peft_names = set(get_peft_model_state_dict(model))
        if saved != peft_names:
            raise AssertionError(f"exported adapter keys differ from peft's: {sorted(saved ^ peft_names)[:4]}")
    ids, mask = left_padded([p + c for p, c in pairs], device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask, position_ids=positions).logits.float()
    logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:, None])[..., 0]
    rows = [logp[row, logp.shape[1] - len(c) :].tolist() for row, (_, c) in enumerate(pairs)]
    del model, logits
    return rows


def reference_logprobs(model_dir: Path, adapter: dict | None, pairs) -> list[list[float]]:
    import json

    import reference_model as ref

    from leangrpo_learner import safetensors_io

    raw = json.loads((model_dir / "config.json").read_text())
    weights = {k: v.float() for k, v in safetensors_io.load_file(model_dir / "model.safetensors").items()}
    if raw.get("tie_word_embeddings"):
        weights.setdefault("lm_head.weight", weights["model.embed_tokens.weight"])
    settings = ref.LoraSettings(16, 32, ALL_LINEAR) if adapter is not None else None
    model = ref.CausalLM(ref.Config(raw), weights, settings, adapter)
    with torch.no_grad():
        logp, _ = ref.completion_logprobs(model, pairs, 1.0, use_adapter=adapter is not None)
    return [row.tolist() for row in logp]


def max_mean_error(got: list[list[float]], want: list[list[float]]) -> tuple[float, float]:
    diffs = [abs(a - b) for g, w in zip(got, want) for a, b in zip(g, w)]
    return max(diffs), sum(diffs) / len(diffs)


def run(smoke: bool, device: torch.device, work: Path) -> dict:
    available, missing = sources()
    dtypes = ["float32"] if device.type == "cpu" else ["float32", "bfloat16"]
    rows, skipped = [], []
    if missing:
        skipped.append(f"source transformers and the plain-transformers comparator: {missing}; native compared with scripts/reference instead")
    if device.type == "cpu":
        skipped.append("bfloat16: the learner runs bf16 on CUDA only")
    for shape_name, shape in PARITY_SHAPES.items():
        config = tiny(shape) if smoke else shape
        model_dir = write_random_model(config, Path(tempfile.mkdtemp(dir=work)) / shape_name, seed=1)
        pairs = sample_pairs(config["vocab_size"], 4 if smoke else 8, 24 if smoke else 256, seed=2)
        for with_lora in (False, True):
            # One adapter for every source and the comparator: random A and B, saved as the learner exports it.
            probe = load_learner(learner_config(model_dir, "native", device), device)
            tensors = random_adapter({k: list(v.shape) for k, v in probe.adapter.peft_tensors().items()}, seed=3) if with_lora else None
            adapter_dir = None
            if with_lora:
                probe.adapter.assign(tensors)
                adapter_dir = model_dir / "adapter"
                save_peft_files(export_peft_files(probe.adapter, str(model_dir)), adapter_dir)
            del probe
            truth = (
                transformers_logprobs(model_dir, adapter_dir, torch.float32, device, pairs)
                if not missing
                else reference_logprobs(model_dir, tensors, pairs)
            )
            comparator = "transformers+peft fp32" if not missing else "scripts/reference fp32"
            for dtype in dtypes:
                hf_bf16_error = None
                if dtype == "bfloat16":
                    hf_bf16_error = max_mean_error(transformers_logprobs(model_dir, adapter_dir, torch.bfloat16, device, pairs), truth)[0]
                for source in available:
                    learner = load_learner(learner_config(model_dir, source, device, dtype=dtype), device)
                    if with_lora:
                        learner.adapter.assign(tensors)
                    got = learner.compute_logprobs(pairs, reference=not with_lora, sampling=SamplingDistribution(temperature=1.0))[0]
                    worst, mean = max_mean_error(got, truth)
                    tolerance = FP32_TOLERANCE if dtype == "float32" else 2 * hf_bf16_error + 1e-2
                    rows.append(
                        {
                            "shape": shape_name,
                            "dtype": dtype,
                            "lora": with_lora,
                            "source": source,
                            "comparator": comparator,
                            "max_abs_error": worst,
                            "mean_abs_error": mean,
                            "transformers_bf16_max_abs_error": hf_bf16_error,
                            "tolerance": tolerance,
                            "ok": worst <= tolerance,
                        }
                    )
                    del learner
                    if device.type == "cuda":
                        torch.cuda.empty_cache()
    return {"ok": all(r["ok"] for r in rows), "rows": rows, "skipped": skipped, "fp32_tolerance": FP32_TOLERANCE}
