"""The PyTorch learner's GPU readiness check, one command, Python only (torch, transformers, peft,
grpcio, protobuf; no Node, no downloads):

    python bench/gpu/check.py --out gpu-check.json          # on a CUDA machine, ≤ 8 min on one H100
    python bench/gpu/check.py --cpu-smoke --out smoke.json  # tiny shapes on CPU (CI), < 1 min

Parts (services/learner-torch/README.md says what each figure means and the targets):
  parity                 logprobs of both model sources vs plain transformers + peft (fp32, bf16, ± LoRA)
  step-<source>[-gc]     one GRPO TrainStep through gRPC, Qwen2.5-0.5B shape, 16×8×512 tokens, LoRA r16
  torchrun               torchrun --nproc-per-node 1: NCCL group, serve, one step, SIGTERM
  large-<source>         the Qwen2.5-7B shape with gradient checkpointing: fits in 80 GB? seconds?

Each part runs in its own process under its own timeout (and the whole run under --budget-s), so
a part that crashes, runs out of memory or hangs loses only its own figures. Parts that cannot
run here (transformers missing) are reported as skipped with the reason. Results: JSON to --out
and a table on stdout; the exit code is 1 when a part that ran failed."""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# Everything is local (random weights in temporary directories): never wait on a hub that a GPU
# host without network cannot reach. The parts' processes inherit this.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# name -> (seconds allowed on a GPU, seconds allowed in the CPU smoke run)
PART_TIMEOUTS = {
    "parity": (200, 60),
    "step-native": (90, 40),
    "step-native-gc": (90, 40),
    "step-transformers": (90, 40),
    "step-transformers-gc": (90, 40),
    "torchrun": (120, 60),
    "large-native": (150, 40),
    "large-transformers": (150, 40),
}
NEEDS_TRANSFORMERS = {"step-transformers", "step-transformers-gc", "large-transformers"}


def run_part(name: str, smoke: bool, work: Path) -> dict:
    """Runs one part in this process (the child side)."""
    from environment import device_of

    device = device_of(smoke)
    if name == "parity":
        import parity

        return parity.run(smoke, device, work)
    if name.startswith("step-"):
        import grpo_step

        source = name.split("-")[1]
        return grpo_step.run(smoke, device, work, source, gradient_checkpointing=name.endswith("-gc"), timed_steps=1 if smoke else 2)
    if name.startswith("large-"):
        import large_model

        return large_model.run(smoke, device, work, name.split("-")[1])
    if name == "torchrun":
        import torchrun_nccl

        return torchrun_nccl.run(smoke, device, work)
    raise ValueError(f"unknown part {name!r}; accepted: {', '.join(PART_TIMEOUTS)}")


def child_main(args, runner=None) -> int:
    started = time.perf_counter()
    try:
        result = (runner or run_part)(args.run_part, args.cpu_smoke, Path(args.work))
    except BaseException as error:  # noqa: BLE001 - report whatever the part died of
        tail = "".join(traceback.format_exception(type(error), error, error.__traceback__))[-3000:]
        kind = "out of GPU memory" if "OutOfMemory" in type(error).__name__ or "out of memory" in str(error) else type(error).__name__
        result = {"ok": False, "error": f"{kind}: {error}"[:1000], "traceback": tail}
    result["part_seconds"] = round(time.perf_counter() - started, 2)
    Path(args.part_out).write_text(json.dumps(result, indent=2))
    return 0


def launch(name: str, smoke: bool, work: Path, timeout_s: float, script: Path | None = None) -> dict:
    """Runs a part as a child process in its own process group (so a timeout kills its children too);
    `script` is the command whose --run-part runs it (this one by default)."""
    out = work / f"{name}.json"
    command = [sys.executable, str(script or Path(__file__).resolve()), "--run-part", name, "--part-out", str(out), "--work", str(work)]
    if smoke:
        command.append("--cpu-smoke")
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return {
            "ok": False,
            "error": f"timed out after {timeout_s:.0f} s",
            "output_tail": (output or "")[-2000:],
            "part_seconds": round(time.perf_counter() - started, 2),
        }
    if not out.exists():
        return {
            "ok": False,
            "error": f"the part's process exited {process.returncode} without a result",
            "output_tail": output[-3000:],
            "part_seconds": round(time.perf_counter() - started, 2),
        }
    return json.loads(out.read_text())


def environment_facts(smoke: bool) -> dict:
    import torch

    from environment import sources

    facts = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda, "mode": "cpu-smoke" if smoke else "gpu"}
    facts["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() and not smoke else "cpu"
    _, missing = sources()
    if missing:
        facts["transformers"] = f"unavailable: {missing}"
    else:
        import peft
        import transformers

        facts["transformers"], facts["peft"] = transformers.__version__, peft.__version__
    return facts


def summary(name: str, r: dict) -> str:
    if r.get("skipped_reason"):
        return f"skipped: {r['skipped_reason']}"
    if not r.get("ok") and "error" in r:
        return r["error"][:110]
    if name == "parity":
        worst = {}
        for row in r["rows"]:
            key = (row["dtype"], row["source"])
            worst[key] = max(worst.get(key, 0.0), row["max_abs_error"])
        return "max |Δlogprob| " + ", ".join(f"{s}/{d} {e:.1e}" for (d, s), e in sorted(worst.items()))
    if name.startswith("step-"):
        mfu = f", MFU {r['mfu']:.1%}" if r.get("mfu") is not None else ""
        mem = f", peak {r['peak_gpu_memory_gib']} GiB" if r.get("peak_gpu_memory_gib") is not None else ""
        return f"{r['seconds']:.2f} s/step, {r['tokens_per_second']:.0f} tok/s{mem}{mfu}"
    if name.startswith("large-"):
        mem = f", peak {r['peak_gpu_memory_gib']} GiB (fits 80 GB: {r['fits_80gb']})" if r.get("peak_gpu_memory_gib") is not None else ""
        return f"{r['seconds']:.2f} s/step{mem}"
    if name == "torchrun":
        return f"{r['backend']}: up in {r['start_seconds']} s, step {r['step']} in {r['step_seconds']} s, exit {r['torchrun_exit_code']}"
    return ""


def ratios(parts: dict) -> dict:
    """Step times against their baselines from the same run: transformers vs native, and the cost of
    gradient checkpointing; and the step target (10 s on one H100) where the part ran on a GPU."""
    out = {}

    def seconds(name):
        r = parts.get(name) or {}
        return r.get("seconds") if r.get("ok") else None

    for a, b, label in (
        ("step-transformers", "step-native", "step transformers / native"),
        ("step-transformers-gc", "step-native-gc", "step transformers / native, checkpointing"),
        ("step-native-gc", "step-native", "step native checkpointing / none"),
        ("step-transformers-gc", "step-transformers", "step transformers checkpointing / none"),
        ("large-transformers", "large-native", "7B transformers / native"),
    ):
        if seconds(a) and seconds(b):
            out[label] = round(seconds(a) / seconds(b), 3)
    for name, r in parts.items():
        if name.startswith("step-") and r.get("ok") and r.get("target_seconds"):
            out[f"{name} / target {r['target_seconds']:g} s"] = round(r["seconds"] / r["target_seconds"], 3)
    return out


def print_table(results: dict) -> None:
    env = results["environment"]
    print(f"\nGPU readiness check — {env['device']}, torch {env['torch']}, transformers {env.get('transformers')}")
    print(f"{'part':<22} {'result':<8} {'seconds':>8}  figures")
    print("-" * 100)
    for name, r in results["parts"].items():
        status = "skipped" if r.get("skipped_reason") else ("ok" if r.get("ok") else "FAILED")
        print(f"{name:<22} {status:<8} {r.get('part_seconds', 0):>8.1f}  {summary(name, r)}")
    for label, ratio in results["ratios"].items():
        print(f"  {label}: {ratio:.2f}×")
    print(f"total {results['total_seconds']:.0f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu-smoke", action="store_true", help="tiny shapes on CPU (what CI runs)")
    parser.add_argument("--out", default="gpu-check.json", help="where the JSON results go")
    parser.add_argument("--parts", default=",".join(PART_TIMEOUTS), help=f"comma-separated subset of: {', '.join(PART_TIMEOUTS)}")
    parser.add_argument("--budget-s", type=float, default=None, help="whole-run limit (default 470 on a GPU, 240 in the smoke run)")
    parser.add_argument("--run-part", help=argparse.SUPPRESS)
    parser.add_argument("--part-out", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_part:
        return child_main(args)

    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PART_TIMEOUTS]
    if unknown:
        parser.error(f"--parts names {', '.join(unknown)}; accepted: {', '.join(PART_TIMEOUTS)}")
    smoke = args.cpu_smoke
    if not smoke:
        import torch

        if not torch.cuda.is_available():
            parser.error("torch sees no CUDA device; use --cpu-smoke for the CPU run")
    budget = args.budget_s if args.budget_s is not None else (240 if smoke else 470)
    started = time.perf_counter()
    facts = environment_facts(smoke)
    missing = facts["transformers"].startswith("unavailable") if isinstance(facts["transformers"], str) else False
    results = {"environment": facts, "parts": {}}
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as work:
        for name in parts:
            left = budget - (time.perf_counter() - started)
            if name in NEEDS_TRANSFORMERS and missing:
                results["parts"][name] = {"ok": None, "skipped_reason": facts["transformers"].removeprefix("unavailable: ")}
                continue
            if left < 10:
                results["parts"][name] = {"ok": None, "skipped_reason": f"the run's budget of {budget:.0f} s was spent"}
                continue
            limit = min(PART_TIMEOUTS[name][1 if smoke else 0], left)
            print(f"[{time.perf_counter() - started:6.1f} s] {name} (limit {limit:.0f} s)", file=sys.stderr, flush=True)
            results["parts"][name] = launch(name, smoke, Path(work), limit)
    results["ratios"] = ratios(results["parts"])
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    Path(args.out).write_text(json.dumps(results, indent=2))
    print_table(results)
    print(f"results: {args.out}")
    return 1 if any(r.get("ok") is False for r in results["parts"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
