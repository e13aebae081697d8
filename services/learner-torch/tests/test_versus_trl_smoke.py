"""bench/gpu/versus_trl.py --cpu-smoke: the side-by-side bench against TRL, run for real on tiny
shapes on CPU, so the command a GPU run takes is known to work before it gets there. TRL's arm
runs where trl, peft, transformers and datasets are installed and is reported skipped, with the
reason, where not (CI); the fsdp part runs where torch has FSDP2 and is skipped, with the
reason, on Debian's torch 1.13."""
import json
import math
import subprocess
import sys

from conftest import REPO_ROOT

BENCH = REPO_ROOT / "bench" / "gpu" / "versus_trl.py"
sys.path.insert(0, str(BENCH.parent))


def test_cpu_smoke_compares_both_arms_profiles_both_steps_and_checks_fsdp(tmp_path):
    from trl_arm import trl_missing

    from leangrpo_learner.distributed.fsdp import fully_shard_function

    out = tmp_path / "smoke.json"
    parts = "ours-0.5b,trl-0.5b,profile,fsdp"
    result = subprocess.run([sys.executable, str(BENCH), "--cpu-smoke", "--parts", parts, "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(out.read_text())
    assert list(report["parts"]) == parts.split(",")
    ours = report["parts"]["ours-0.5b"]
    assert ours["ok"] is True and ours["seconds"] > 0 and all(math.isfinite(s["loss"]) for s in ours["steps"])
    trl = report["parts"]["trl-0.5b"]
    missing = trl_missing()
    if missing:
        assert trl["ok"] is None and trl["skipped_reason"] == missing
    else:
        assert trl["ok"] is True and {s["micro_batch"] for s in trl["settings"]} == {4, 8}
        assert trl["seconds"] == min(s["seconds"] for s in trl["settings"] if s["ok"])
        row = report["comparison"][0]
        assert row["regime"] == "0.5b" and row["ours_over_trl"] == round(ours["seconds"] / trl["seconds"], 3)
    profile = report["parts"]["profile"]
    assert profile["ok"] is True and profile["parity"]["within_tolerance"] is True and profile["parity"]["dtype"] == "float32"
    for name in ("former", "fast"):
        p = profile["profile"][name]
        assert p["kernel_count"] > 0 and p["top"] and p["wall_seconds"] >= p["outside_kernels_seconds"] >= 0
    fsdp = report["parts"]["fsdp"]
    try:
        fully_shard_function()
    except ValueError as error:
        assert fsdp["skipped_reason"] == str(error)
    else:
        assert fsdp["ok"] is True and fsdp["world_size"] == 2 and fsdp["max_abs_difference"] <= 1e-5
        assert fsdp["layer0_elements_on_rank0"] * 2 == fsdp["layer0_elements"]  # each rank holds half a layer
    assert "ours vs TRL" in result.stdout and f"results: {out}" in result.stdout
