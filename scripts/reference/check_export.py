"""Checks a model directory written by `lean-grpo export --merge` against its base and adapter.

Independent of the TypeScript exporter: the merge W' = W + scaling * B @ A is done here in
PyTorch from the PEFT files, and the logits come from the plain-PyTorch reference model
(reference_model.py), the base with the adapter applied in each linear against the merged
weights without one. Where transformers and peft are installed, the merged directory is
also loaded with AutoModelForCausalLM and compared with PeftModel over the base.

    /usr/bin/python3 scripts/reference/check_export.py BASE_DIR ADAPTER_DIR MERGED_DIR

Prints one JSON object: what was checked, the largest differences, and the checks skipped
with the reason. Exits 1 when a check fails.
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_model as ref  # noqa: E402
import safetensors_io  # noqa: E402

LOGIT_TOLERANCE = 1e-4


def read_weights(directory):
    weights = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".safetensors"):
            weights.update(safetensors_io.read(os.path.join(directory, name)))
    return weights


def independent_merge(base, lora, settings):
    """W + scaling * B @ A in float32, rounded to W's dtype, for every adapted linear."""
    merged = {}
    for key, a in lora.items():
        if ".lora_A." not in key:
            continue
        b = lora[key.replace(".lora_A.", ".lora_B.")]
        name = key.replace("base_model.model.", "").replace(".lora_A.weight", ".weight")
        w = base[name]
        merged[name] = (w.float() + settings.scaling * (b.float() @ a.float())).to(w.dtype)
    return merged


def ulp(t):
    """The spacing of t's dtype at t's magnitude (normal numbers)."""
    info = torch.finfo(t.dtype)
    exponent = torch.floor(torch.log2(t.float().abs().clamp(min=info.tiny)))
    return torch.pow(2.0, exponent) * info.eps


def token_batch(vocab):
    generator = torch.Generator().manual_seed(0)
    sequences = [torch.randint(0, vocab, (n,), generator=generator).tolist() for n in (7, 4, 9)]
    return ref.left_pad(sequences)


def main(base_dir, adapter_dir, merged_dir):
    report = {"checked": [], "skipped": []}
    failures = []
    config = json.load(open(os.path.join(base_dir, "config.json")))
    cfg = ref.Config(config)
    adapter_config = json.load(open(os.path.join(adapter_dir, "adapter_config.json")))
    settings = ref.LoraSettings(adapter_config["r"], adapter_config["lora_alpha"], adapter_config["target_modules"], adapter_config.get("use_rslora", False))
    lora = safetensors_io.read(os.path.join(adapter_dir, "adapter_model.safetensors"))
    base = read_weights(base_dir)
    merged = read_weights(merged_dir)

    # The tensors and their dtypes: the base's (a tied head is not stored, as in the base).
    expected_names = {n for n in base if not n.endswith("rotary_emb.inv_freq")}
    if set(merged) != expected_names:
        only_merged, only_base = sorted(set(merged) - expected_names)[:3], sorted(expected_names - set(merged))[:3]
        failures.append(f"tensor names differ: only in merged {only_merged}, only in base {only_base}")
    wrong_dtype = [n for n in merged if n in base and merged[n].dtype != base[n].dtype]
    if wrong_dtype:
        failures.append(f"dtype differs from the base for {wrong_dtype[:3]}")
    report["checked"].append("names and dtypes as the base's")

    # The merge, done here: adapted weights within one unit in the last place of their dtype, the rest bit-identical.
    expected = independent_merge(base, lora, settings)
    worst_weight = 0.0
    for name, tensor in merged.items():
        if name not in expected:
            if name in base and not torch.equal(tensor, base[name]):
                failures.append(f"{name} is not adapted but differs from the base")
            continue
        want = expected[name]
        difference = (tensor.float() - want.float()).abs()
        allowed = 1e-6 * (1 + want.float().abs()) if want.dtype == torch.float32 else ulp(want)
        if bool((difference > allowed).any()):
            failures.append(f"{name}: merged weight off the independent merge by {difference.max().item():.3g}")
        worst_weight = max(worst_weight, difference.max().item())
    if len(expected) == 0:
        failures.append("the adapter adapts no weight")
    report["checked"].append(f"independent merge W + s*B@A of {len(expected)} weights")
    report["max_weight_difference"] = worst_weight

    # Logits: the base with the adapter in each linear (reference model) against the merged weights.
    # For a 16-bit base, against the base with the independently merged weights (the dtype's rounding is the export's by design).
    ids, mask = token_batch(cfg.vocab)
    widen = lambda weights: {n: t.float() for n, t in weights.items()}  # noqa: E731
    float_lora = {k: v.float() for k, v in lora.items()}
    all_float = all(t.dtype == torch.float32 for t in base.values())
    with torch.no_grad():
        if all_float:
            want_logits = ref.CausalLM(cfg, widen(base), settings, float_lora).logits(ids, mask, use_adapter=True)
            report["reference"] = "base + adapter (reference model)"
        else:
            want_logits = ref.CausalLM(cfg, widen({**base, **expected})).logits(ids, mask, use_adapter=False)
            report["reference"] = "base with the independent merge in its dtype (reference model)"
        got_logits = ref.CausalLM(cfg, widen({**base, **merged})).logits(ids, mask, use_adapter=False)
        unmerged = ref.CausalLM(cfg, widen(base)).logits(ids, mask, use_adapter=False)
    real = mask.bool()
    logit_difference = (got_logits - want_logits).abs()[real].max().item()
    adapter_effect = (want_logits - unmerged).abs()[real].max().item()
    report["max_logit_difference"] = logit_difference
    report["adapter_effect"] = adapter_effect
    if logit_difference > LOGIT_TOLERANCE:
        failures.append(f"logits off by {logit_difference:.3g} (> {LOGIT_TOLERANCE})")
    if adapter_effect < 1e-3:
        failures.append(f"the adapter moves the logits by {adapter_effect:.3g} only: this check could not catch a merge left out")
    report["checked"].append("reference-model logits")

    # transformers + peft, where installed: what a lab would load.
    try:
        import peft  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as error:
        report["skipped"].append(f"transformers + peft: not installed ({error.name})")
    else:
        if not all_float:
            report["skipped"].append("transformers + peft: a 16-bit base rounds the merge by design; compared on float32 bases only")
        else:
            from peft import PeftModel
            from transformers import AutoModelForCausalLM
            from transformers.utils import logging as hf_logging

            # The report is the only output: no progress bars or notices on stderr.
            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()
            with torch.no_grad():
                # Both folders are float32 here, which every transformers version loads as float32 by
                # default (`torch_dtype` is deprecated in favour of `dtype` from transformers 5).
                base_model = AutoModelForCausalLM.from_pretrained(base_dir).float()
                with_adapter = PeftModel.from_pretrained(base_model, adapter_dir).eval()
                want_hf = with_adapter(input_ids=ids, attention_mask=mask).logits
                merged_model = AutoModelForCausalLM.from_pretrained(merged_dir).float().eval()
                got_hf = merged_model(input_ids=ids, attention_mask=mask).logits
            hf_difference = (got_hf - want_hf).abs()[real].max().item()
            report["transformers_max_logit_difference"] = hf_difference
            if hf_difference > LOGIT_TOLERANCE:
                failures.append(f"transformers: merged logits off PeftModel's by {hf_difference:.3g}")
            report["checked"].append("transformers AutoModelForCausalLM vs peft PeftModel logits")

    report["failures"] = failures
    print(json.dumps(report))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
