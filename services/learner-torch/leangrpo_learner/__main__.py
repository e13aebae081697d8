"""`python -m leangrpo_learner serve --port 0 --host 127.0.0.1 --config-json '<json>'`

Prints exactly one line to stdout when listening (`listening on HOST:PORT`); logs go to stderr.
SIGTERM / SIGINT stop gracefully (exit 0). A bad config exits 2 naming the key. Under torchrun,
rank 0 serves and the other ranks follow its commands (distributed/)."""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading

import torch

from .config import ConfigError, load_config
from .cpu_threads import configure_cpu_threads
from .exposure import is_loopback_host, read_tls_files, require_tls_beyond_loopback, warn_if_plaintext_beyond_loopback

log = logging.getLogger("leangrpo_learner")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="leangrpo_learner", description="The lean-grpo LearnerService in PyTorch")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve leangrpo.v1.LearnerService over gRPC")
    serve.add_argument("--config-json", default="{}", help="config as JSON (the TS learner's keys)")
    serve.add_argument("--host", help="overrides server.host")
    serve.add_argument("--port", type=int, help="overrides server.port (0 picks a free port)")
    return parser.parse_args(argv)


def resolve_device(setting: str) -> torch.device:
    if setting == "cuda" and not torch.cuda.is_available():
        raise ConfigError('config key "torch.device" is "cuda" but torch sees no CUDA device; accepted here: auto, cpu')
    if setting == "cuda" or (setting == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


def main(argv=None) -> int:
    from .rpc.tracing import TraceIdLogFilter

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s%(trace)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(TraceIdLogFilter())
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        try:
            given = json.loads(args.config_json)
        except json.JSONDecodeError as error:
            raise ConfigError(f"--config-json is not valid JSON ({error})") from None
        if isinstance(given, dict):
            given.setdefault("server", {})
            if isinstance(given["server"], dict):
                if args.host is not None:
                    given["server"]["host"] = args.host
                if args.port is not None:
                    given["server"]["port"] = args.port
        config = load_config(given)
        require_auth_beyond_loopback(config, os.environ)
        read_tls_files(config["server"]["tls"])  # a wrong certificate stops the learner before the model loads
        check_reasoning_settings_at_start(config)
        # Launched by torchrun (it sets RANK and MASTER_ADDR): join the process group even with one
        # rank, so `torchrun --nproc-per-node 1` runs the NCCL path a multi-GPU run takes.
        distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1 or ("RANK" in os.environ and "MASTER_ADDR" in os.environ)
        if distributed and not config["model"]["dir"]:
            raise ConfigError('config key "model.dir" is unset; under torchrun every rank loads the model at start')
        from .distributed.fsdp import check_sharding

        check_sharding(config, distributed)
        device = resolve_device(config["torch"]["device"]) if not distributed else None
    except ConfigError as error:
        print(f"leangrpo_learner: {error}", file=sys.stderr)
        return 2
    configure_cpu_threads(config["torch"]["threads"], config["torch"]["blas_threads"])
    if distributed:
        return serve_distributed(config)
    return serve(config, device)


def require_auth_beyond_loopback(config: dict, env) -> None:
    """LEANGRPO_AUTH_TOKEN is the mesh's one token (the rule every lean-grpo command follows): it is
    this learner's server.auth.token, and a server.auth.token set too must be the same, or the
    learner does not start. A learner that binds beyond loopback without any token does not start
    either: anyone on the network could train it, nor without TLS unless server.allow_plaintext
    says the network already encrypts (exposure.py)."""
    auth = config["server"]["auth"]
    from_env = env.get("LEANGRPO_AUTH_TOKEN") or None
    if from_env is not None and auth["token"] and auth["token"] != from_env:
        raise ConfigError(
            "server.auth.token and LEANGRPO_AUTH_TOKEN give different tokens; "
            "the mesh has one token: set it once (LEANGRPO_AUTH_TOKEN) or give both the same value"
        )
    if from_env is not None:
        auth["token"] = from_env
    if not auth["token"] and not is_loopback_host(config["server"]["host"]):
        raise ConfigError(
            f'server.host "{config["server"]["host"]}" is beyond loopback and no token is set: '
            "set LEANGRPO_AUTH_TOKEN (or server.auth.token), which every caller then presents as `authorization: Bearer <token>`"
        )
    require_tls_beyond_loopback(config["server"])


def check_reasoning_settings_at_start(config: dict) -> None:
    """model.reasoning_* that cannot work with model.dir (size, map, markers) stop the server before it starts."""
    from .errors import ModelError
    from .model.model_source import check_reasoning_vocabulary

    try:
        check_reasoning_vocabulary(config)
    except ModelError as error:
        raise ConfigError(str(error)) from None


def _wait_for_signal() -> None:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()


def serve(config: dict, device: torch.device, host=None) -> int:
    from .rpc.learner_host import LearnerHost
    from .rpc.server import start_server
    from .rpc.tracing import RpcTracing

    host = host or LearnerHost(config, device)
    tracing = RpcTracing()
    server, port, health = start_server(config, host, tracing)
    warn_if_plaintext_beyond_loopback(config["server"])
    print(f"listening on {config['server']['host']}:{port}", flush=True)
    log.info("LearnerService on %s:%d (device %s, torch %s)", config["server"]["host"], port, device, torch.__version__)
    _wait_for_signal()
    health.set_serving(False)
    grace = config["server"]["shutdown"]["grace_period_ms"] / 1000
    server.stop(grace).wait()
    tracing.shutdown()  # the last spans leave before the process does
    log.info("stopped")
    return 0


def serve_distributed(config: dict) -> int:
    import torch.distributed as dist

    from .distributed.process_group import ProcessGroupCollective, init_process_group
    from .distributed.worker_loop import run_worker
    from .path_root import PathRoot
    from .rpc.learner_host import LearnerHost, load_learner

    device = init_process_group()
    collective = ProcessGroupCollective(device, lockstep=config["torch"]["sharding"] == "fsdp")
    learner = load_learner(config, device, collective)
    log.info("rank %d/%d ready on %s", collective.rank, collective.world_size, device)
    try:
        if collective.is_main:
            host = LearnerHost(config, device, collective, learner)
            code = serve(config, device, host)
            with host.lock:
                collective.send_command("stop", None)
            return code
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # torchrun stops the group through rank 0
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        run_worker(learner, collective, PathRoot(config["checkpoint_dir"], "checkpoint_dir"))
        return 0
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
