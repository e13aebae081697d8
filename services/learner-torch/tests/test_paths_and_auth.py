"""Client-given checkpoint paths stay under checkpoint_dir (path_root.py), no error carries a
file's text, and server.auth.token is required of every call but health and reflection,
compared in constant time."""
import os

import grpc
import pytest

from batches import TINY_CONFIG
from conftest import LM_FIXTURES, PACKAGE_ROOT
from leangrpo_learner import proto
from leangrpo_learner.path_root import PathError, PathRoot
from server_process import LearnerProcess

M = proto.message


@pytest.fixture()
def tree(tmp_path):
    root = tmp_path / "root"
    (root / "ck").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("SECRET-41c7 not json")
    os.symlink(tmp_path, root / "up")
    os.symlink(tmp_path / "secret.txt", root / "ck" / "trainer_state.json")
    os.mkfifo(root / "ck" / "optimizer.safetensors")
    return tmp_path, PathRoot(str(root), "checkpoint_dir")


def refusal(call, *args, **kwargs) -> PathError:
    with pytest.raises(PathError) as error:
        call(*args, **kwargs)
    return error.value


def test_path_root_refuses_absolute_dotdot_and_symlinks(tree):
    base, root = tree
    assert refusal(root.open_directory, "/etc", "path").args[0] == 'path "/etc" is absolute; give a path relative to checkpoint_dir'
    for given in ["..", "../x", "ck/../../x", "ck\\..\\..\\x"]:
        assert 'contains ".."' in refusal(root.open_directory, given, "path").args[0]
    assert refusal(root.open_directory, "up", "path").args[0] == 'path "up" is a symlink; symlinks inside checkpoint_dir are refused'
    assert refusal(root.open_directory, "up/planted", "path", create=True).code == "invalid"
    assert not (base / "planted").exists()
    missing = refusal(root.open_directory, "nope", "path")
    assert (missing.code, missing.args[0]) == ("missing", 'path "nope" does not exist under checkpoint_dir')
    made = root.directory_for_write("runs/r1/checkpoints/step-1", "path")
    assert made.is_dir() and made == (base / "root" / "runs/r1/checkpoints/step-1").resolve()


def test_path_root_checks_the_files_read_inside_a_directory(tree):
    _, root = tree
    with root.open_directory("ck", "path") as directory:
        planted = refusal(directory.read_bytes, "trainer_state.json")
        assert planted.args[0] == 'path "ck/trainer_state.json" is a symlink; symlinks inside checkpoint_dir are refused'
        fifo = refusal(directory.read_bytes, "optimizer.safetensors")
        assert fifo.args[0] == 'path "ck/optimizer.safetensors" is not a regular file (a directory, FIFO or device is refused)'
        assert directory.read_optional("absent.json") is None  # a missing file is the reader's to report


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("learner-paths")
    (base / "checkpoints").mkdir()
    process = LearnerProcess({**TINY_CONFIG, "model": {"dir": str(LM_FIXTURES / "qwen2-tiny")}, "checkpoint_dir": str(base / "checkpoints")})
    yield base, process
    assert process.stop() == 0


def rpc_error(call) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value


def test_save_checkpoint_writes_under_checkpoint_dir_only(served):
    base, learner = served
    outside = base / "outside"
    outside.mkdir()
    os.symlink(outside, base / "checkpoints" / "link-out")
    for given in [str(outside / "planted"), "../planted", "link-out/planted"]:
        error = rpc_error(lambda: learner.unary("SaveCheckpoint", M("leangrpo.v1.SaveCheckpointRequest")(path=given), "leangrpo.v1.SaveCheckpointResponse"))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, given
    assert list(outside.iterdir()) == [] and not (base / "planted").exists()


def test_save_checkpoint_never_writes_through_a_symlink_planted_in_checkpoint_dir(served):
    base, learner = served
    outside = base / "outside-planted"
    (outside / "adapter-here").mkdir(parents=True)
    victim = outside / "victim.bin"
    victim.write_bytes(b"VICTIM-7a21")

    def save(path):
        return rpc_error(lambda: learner.unary("SaveCheckpoint", M("leangrpo.v1.SaveCheckpointRequest")(path=path), "leangrpo.v1.SaveCheckpointResponse"))

    # A checkpoint's optimizer state swapped for a link to a file elsewhere.
    (base / "checkpoints" / "ck").mkdir()
    os.symlink(os.path.relpath(victim, base / "checkpoints" / "ck"), base / "checkpoints" / "ck" / "optimizer.safetensors")
    error = save("ck")
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == 'path "ck/optimizer.safetensors" is a symlink; symlinks inside checkpoint_dir are refused'
    assert victim.read_bytes() == b"VICTIM-7a21"
    # Its adapter directory swapped for a link to a directory elsewhere.
    (base / "checkpoints" / "ck2").mkdir()
    os.symlink(outside / "adapter-here", base / "checkpoints" / "ck2" / "adapter")
    error = save("ck2")
    assert error.details() == 'path "ck2/adapter" is a symlink; symlinks inside checkpoint_dir are refused'
    assert list((outside / "adapter-here").iterdir()) == []
    # Refused before anything was written beside the links.
    assert sorted(p.name for p in (base / "checkpoints" / "ck").iterdir()) == ["optimizer.safetensors"]
    assert sorted(p.name for p in (base / "checkpoints" / "ck2").iterdir()) == ["adapter"]


def test_load_checkpoint_reads_under_checkpoint_dir_only_and_never_echoes_a_file(served):
    base, learner = served

    def load(path):
        return rpc_error(lambda: learner.unary("LoadCheckpoint", M("leangrpo.v1.LoadCheckpointRequest")(path=path), "leangrpo.v1.LoadCheckpointResponse"))

    assert load("/etc").code() == grpc.StatusCode.INVALID_ARGUMENT
    assert load("..").code() == grpc.StatusCode.INVALID_ARGUMENT
    assert load("nope").code() == grpc.StatusCode.NOT_FOUND
    (base / "secret.json").write_text("SECRET-77aa {")
    (base / "checkpoints" / "planted").mkdir()
    os.symlink(base / "secret.json", base / "checkpoints" / "planted" / "trainer_state.json")
    planted = load("planted")
    assert planted.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert planted.details() == 'path "planted/trainer_state.json" is a symlink; symlinks inside checkpoint_dir are refused'
    (base / "checkpoints" / "bad").mkdir()
    (base / "checkpoints" / "bad" / "trainer_state.json").write_text("SECRET-77aa {")
    bad = load("bad")
    assert bad.details() == "trainer_state.json is not valid JSON; is it a directory written by SaveCheckpoint?"
    for error in (planted, bad):
        assert "SECRET" not in error.details()


def test_auth_token_is_required_except_for_health_and_reflection():
    learner = LearnerProcess({"server": {"auth": {"token": "s3cret-token"}}})
    try:
        status = ("GetStatus", M("leangrpo.v1.GetStatusRequest")(), "leangrpo.v1.GetStatusResponse")
        assert rpc_error(lambda: learner.unary(*status)).code() == grpc.StatusCode.UNAUTHENTICATED
        for wrong in ["Bearer s3cret-toke", "Bearer s3cret-tokenX", "Bearer x", "s3cret-token"]:
            call = learner.channel.unary_unary(
                "/leangrpo.v1.LearnerService/GetStatus", request_serializer=lambda m: m.SerializeToString(), response_deserializer=M(status[2]).FromString
            )
            assert rpc_error(lambda: call(status[1], metadata=[("authorization", wrong)], timeout=10)).code() == grpc.StatusCode.UNAUTHENTICATED
        assert call(status[1], metadata=[("authorization", "Bearer s3cret-token")], timeout=10).step == 0
        health = learner.unary(
            "Check", M("grpc.health.v1.HealthCheckRequest")(service=""), "grpc.health.v1.HealthCheckResponse", service="grpc.health.v1.Health"
        )
        assert health.status == 1
        reflect = learner.channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=M("grpc.reflection.v1.ServerReflectionResponse").FromString,
        )
        (listed,) = list(reflect(iter([M("grpc.reflection.v1.ServerReflectionRequest")(list_services="")]), timeout=10))
        assert "leangrpo.v1.LearnerService" in [s.name for s in listed.list_services_response.service]
    finally:
        assert learner.stop() == 0


def test_a_learner_beyond_loopback_needs_a_token():
    from leangrpo_learner.__main__ import require_auth_beyond_loopback
    from leangrpo_learner.config import ConfigError, load_config

    config = load_config({"server": {"host": "0.0.0.0", "allow_plaintext": True}})
    with pytest.raises(ConfigError, match=r'server.host "0.0.0.0" is beyond loopback and no token is set: set LEANGRPO_AUTH_TOKEN'):
        require_auth_beyond_loopback(config, {})
    require_auth_beyond_loopback(config, {"LEANGRPO_AUTH_TOKEN": "env-token"})
    assert config["server"]["auth"]["token"] == "env-token"
    on_loopback = load_config({})
    require_auth_beyond_loopback(on_loopback, {})
    assert on_loopback["server"]["auth"]["token"] is None


def test_a_token_given_both_ways_must_agree():
    from leangrpo_learner.__main__ import require_auth_beyond_loopback
    from leangrpo_learner.config import ConfigError, load_config

    both = load_config({"server": {"auth": {"token": "configured-secret"}}})
    with pytest.raises(ConfigError) as refused:
        require_auth_beyond_loopback(both, {"LEANGRPO_AUTH_TOKEN": "env-secret"})
    assert str(refused.value).startswith("server.auth.token and LEANGRPO_AUTH_TOKEN give different tokens")
    assert "secret" not in str(refused.value).replace("LEANGRPO", "")
    same = load_config({"server": {"host": "0.0.0.0", "auth": {"token": "one"}, "allow_plaintext": True}})
    require_auth_beyond_loopback(same, {"LEANGRPO_AUTH_TOKEN": "one"})
    assert same["server"]["auth"]["token"] == "one"
    configured_only = load_config({"server": {"auth": {"token": "own"}}})
    require_auth_beyond_loopback(configured_only, {"LEANGRPO_AUTH_TOKEN": ""})
    assert configured_only["server"]["auth"]["token"] == "own"


def test_the_learner_process_reads_the_variable_and_refuses_a_disagreeing_config():
    """The variable is its token (a call without it is refused, one with it answered); a config that sets another exits 2."""
    import subprocess
    import sys

    learner = LearnerProcess({}, env={"LEANGRPO_AUTH_TOKEN": "env-t0ken"})
    try:
        status = ("GetStatus", M("leangrpo.v1.GetStatusRequest")(), "leangrpo.v1.GetStatusResponse")
        assert rpc_error(lambda: learner.unary(*status)).code() == grpc.StatusCode.UNAUTHENTICATED
        call = learner.channel.unary_unary(
            "/leangrpo.v1.LearnerService/GetStatus", request_serializer=lambda m: m.SerializeToString(), response_deserializer=M(status[2]).FromString
        )
        assert call(status[1], metadata=[("authorization", "Bearer env-t0ken")], timeout=10).step == 0
    finally:
        assert learner.stop() == 0
    env = {**os.environ, "LEANGRPO_AUTH_TOKEN": "env-secret", "PYTHONPATH": str(PACKAGE_ROOT)}
    config = '{"server": {"auth": {"token": "configured-secret"}}}'
    refused = subprocess.run(
        [sys.executable, "-m", "leangrpo_learner", "serve", "--port", "0", "--config-json", config], env=env, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2
    assert "server.auth.token and LEANGRPO_AUTH_TOKEN give different tokens" in refused.stderr
    assert "secret" not in refused.stderr.replace("LEANGRPO", "")
