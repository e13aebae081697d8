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

import gc
import random
import shutil
import tempfile
from pathlib import Path

import torch

from environment import ALL_LINEAR, learner_config, sources
from model_shapes import PARITY_SHAPES, tiny
from random_model import random_adapter, write_random_model

from leangrpo_learner.completion_logprobs import left_padded
from leangrpo_learner.lora.lora_adapter import LoraAdapter
from leangrpo_learner.lora.lora_config import LoraConfig
from leangrpo_learner.lora.lora_layout import native_lora_layout, peft_key
from leangrpo_learner.model.model_config import parse_model_config
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


def transformers_logprobs(model_dir: Path, adapter_dir: Path, dtype: torch.dtype, device, pairs) -> tuple[list[list[float]], list[list[float]]]:
    """(without adapter, with the adapter) from one load of the base model."""
    from peft import PeftModel, get_peft_model_state_dict
    from transformers import AutoModelForCausalLM

    from leangrpo_learner import safetensors_io

    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=dtype, attn_implementation="sdpa").to(device).eval()
    base = _hf_logprobs(model, device, pairs)
    model = PeftModel.from_pretrained(model, str(adapter_dir)).eval()
    saved = set(safetensors_io.load_file(adapter_dir / "adapter_model.safetensors"))
    peft_names = set(get_peft_model_state_dict(model))
    if saved != peft_names:
        raise AssertionError(f"the learner's exported adapter keys differ from peft's: {sorted(saved ^ peft_names)[:4]}")
    adapted = _hf_logprobs(model, device, pairs)
    del model
    return base, adapted


def _hf_logprobs(model, device, pairs) -> list[list[float]]:
    ids, mask = left_padded([p + c for p, c in pairs], device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask, position_ids=positions).logits.float()
    logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:, None])[..., 0]
    return [logp[row, logp.shape[1] - len(c) :].tolist() for row, (_, c) in enumerate(pairs)]


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


def write_adapter(config: dict, directory: Path, seed: int) -> dict[str, torch.Tensor]:
    """Random A and B for every linear (r16, alpha 32), saved as the learner exports adapters."""
    lora = LoraConfig(16, 32.0, tuple(ALL_LINEAR))
    layout = native_lora_layout(parse_model_config(config), lora)
    shapes = {}
    for path, (fan_in, fan_out) in layout.items():
        shapes[peft_key(path, "A")], shapes[peft_key(path, "B")] = [16, fan_in], [fan_out, 16]
    tensors = random_adapter(shapes, seed)
    save_peft_files(export_peft_files(LoraAdapter.from_peft_tensors(layout, lora, tensors), str(directory.parent)), directory)
    return tensors


def _free(device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


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
        adapter_dir = model_dir / "adapter"
        tensors = write_adapter(config, adapter_dir, seed=3)
        pairs = sample_pairs(config["vocab_size"], 4 if smoke else 8, 24 if smoke else 256, seed=2)
        # truth[with_lora]: the fp32 comparator; hf_bf16_error[with_lora]: plain transformers' own bf16 error.
        if missing:
            comparator = "scripts/reference fp32"
            truth = {False: reference_logprobs(model_dir, None, pairs), True: reference_logprobs(model_dir, tensors, pairs)}
        else:
            comparator = "transformers+peft fp32"
            base, adapted = transformers_logprobs(model_dir, adapter_dir, torch.float32, device, pairs)
            truth = {False: base, True: adapted}
        _free(device)
        hf_bf16_error = {}
        if "bfloat16" in dtypes and not missing:
            base, adapted = transformers_logprobs(model_dir, adapter_dir, torch.bfloat16, device, pairs)
            hf_bf16_error = {False: max_mean_error(base, truth[False])[0], True: max_mean_error(adapted, truth[True])[0]}
            _free(device)
        for dtype in dtypes:
            for source in available:
                learner = load_learner(learner_config(model_dir, source, device, dtype=dtype), device)
                for with_lora in (False, True):
                    if with_lora:
                        learner.adapter.assign(tensors)
                    got = learner.compute_logprobs(pairs, reference=not with_lora, sampling=SamplingDistribution(temperature=1.0))[0]
                    worst, mean = max_mean_error(got, truth[with_lora])
                    if dtype == "float32":
                        tolerance = FP32_TOLERANCE
                    elif with_lora in hf_bf16_error:
                        tolerance = 2 * hf_bf16_error[with_lora] + 1e-2
                    else:  # bf16 without the transformers comparator: no measured bf16 error to scale
                        tolerance = 5e-2
                    rows.append(
                        {
                            "shape": shape_name,
                            "dtype": dtype,
                            "lora": with_lora,
                            "source": source,
                            "comparator": comparator,
                            "max_abs_error": worst,
                            "mean_abs_error": mean,
                            "transformers_bf16_max_abs_error": hf_bf16_error.get(with_lora),
                            "tolerance": tolerance,
                            "ok": worst <= tolerance,
                        }
                    )
                del learner
                _free(device)
        shutil.rmtree(model_dir.parent)  # up to 5 GB of fp32 weights per shape
    return {"ok": all(r["ok"] for r in rows), "rows": rows, "skipped": skipped, "fp32_tolerance": FP32_TOLERANCE}
