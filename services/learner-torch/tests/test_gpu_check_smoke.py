"""bench/gpu/check.py --cpu-smoke: the GPU readiness check, run for real on tiny shapes on CPU, so
the script a device session will run in one call is known to work before it gets there. Every
part runs except NCCL (the torchrun part uses gloo here); the transformers parts run where
transformers + peft are installed and are reported skipped, with the reason, where not."""
import json
import math
import subprocess
import sys

from conftest import REPO_ROOT
from leangrpo_learner.model.transformers_support import transformers_missing

CHECK = REPO_ROOT / "bench" / "gpu" / "check.py"


def test_cpu_smoke_runs_every_part_and_reports_json_and_a_table(tmp_path):
    out = tmp_path / "smoke.json"
    result = subprocess.run([sys.executable, str(CHECK), "--cpu-smoke", "--out", str(out)], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(out.read_text())
    parts = report["parts"]
    assert list(parts) == [
        "parity",
        "step-native",
        "step-native-gc",
        "step-transformers",
        "step-transformers-gc",
        "torchrun",
        "large-native",
        "large-transformers",
    ]
    missing = transformers_missing()
    sources = ["native"] if missing else ["native", "transformers"]

    parity = parts["parity"]
    assert parity["ok"] is True
    assert {(r["shape"], r["lora"], r["source"]) for r in parity["rows"]} == {
        (shape, lora, source) for shape in ("qwen2.5-0.5b", "qwen3-0.6b", "llama-3.2-1b") for lora in (False, True) for source in sources
    }
    for row in parity["rows"]:
        assert row["dtype"] == "float32" and row["max_abs_error"] <= 1e-4 and row["tolerance"] == 1e-4
    assert "bfloat16: the learner runs bf16 on CUDA only" in parity["skipped"]

    for name in ["step-native", "step-native-gc"] + ([] if missing else ["step-transformers", "step-transformers-gc"]):
        step = parts[name]
        assert step["ok"] is True, step
        assert step["seconds"] > 0 and step["tokens_per_second"] > 0 and step["model_tflops_per_step"] > 0
        assert all(math.isfinite(s["loss"]) for s in step["steps"])
        assert step["peak_gpu_memory_gib"] is None and step["mfu"] is None  # CPU: no GPU figures, not zeros
    for name in ["large-native"] + ([] if missing else ["large-transformers"]):
        assert parts[name]["ok"] is True and parts[name]["gradient_checkpointing"] is True and math.isfinite(parts[name]["loss"])
    if missing:
        for name in ["step-transformers", "step-transformers-gc", "large-transformers"]:
            assert parts[name] == {"ok": None, "skipped_reason": missing}

    torchrun = parts["torchrun"]
    assert torchrun["ok"] is True and torchrun["step"] == 1 and torchrun["rank0_ready_logged"] is True
    assert torchrun["backend"].startswith("gloo")

    for name in parts:
        assert name in result.stdout  # the table has a line per part
    assert f"results: {out}" in result.stdout


def test_unknown_part_is_refused_naming_the_accepted_ones(tmp_path):
    result = subprocess.run([sys.executable, str(CHECK), "--cpu-smoke", "--parts", "parity,speed"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "--parts names speed; accepted: parity, step-native," in result.stderr


def test_a_part_that_hangs_or_fails_loses_only_its_own_figures(tmp_path):
    """Each part is a child process under its own limit: a timeout kills it (and its children) and
    reports it; a part that raises reports the error; neither stops the caller."""
    sys.path.insert(0, str(CHECK.parent))
    import check

    hung = check.launch("torchrun", smoke=True, work=tmp_path, timeout_s=1)
    assert hung["ok"] is False and hung["error"] == "timed out after 1 s" and hung["part_seconds"] < 30
    broken = check.launch("large-nonexistent", smoke=True, work=tmp_path, timeout_s=60)
    assert broken["ok"] is False
    assert broken["error"] == "ConfigError: config key \"torch.model_source\" is 'nonexistent'; accepted: native, transformers"
    assert "Traceback" in broken["traceback"]
