"""The learner's transport rules, as the TypeScript services have them: beyond loopback a token and
TLS (or server.allow_plaintext where the network already encrypts); the server section the
TypeScript side sends is accepted whole, and what grpcio cannot apply is refused when set; and
anonymous Health.Watch streams cannot take the threads a health check or a LearnerService call
needs."""
import threading

import grpc
import pytest

from leangrpo_learner import proto
from server_process import LearnerProcess

M = proto.message


def test_beyond_loopback_needs_tls_or_an_explicit_plain_text():
    from leangrpo_learner.__main__ import require_auth_beyond_loopback
    from leangrpo_learner.config import ConfigError, load_config

    exposed = load_config({"server": {"host": "0.0.0.0", "auth": {"token": "t"}}})
    with pytest.raises(ConfigError, match=r"beyond loopback without TLS, so the token would cross the network in clear text.*server.allow_plaintext: true"):
        require_auth_beyond_loopback(exposed, {})
    require_auth_beyond_loopback(load_config({"server": {"host": "0.0.0.0", "auth": {"token": "t"}, "allow_plaintext": True}}), {})
    with_tls = load_config({"server": {"host": "0.0.0.0", "auth": {"token": "t"}, "tls": {"cert_file": "c.pem", "key_file": "k.pem"}}})
    require_auth_beyond_loopback(with_tls, {})


def test_the_typescript_server_section_is_accepted_and_what_grpcio_cannot_apply_is_refused():
    from leangrpo_learner.config import ConfigError, load_config

    # The section as the kit's schema fills it in by default (what `train` passes on).
    section = {
        "host": "127.0.0.1",
        "port": 0,
        "allow_plaintext": False,
        "limits": {
            "read_max_bytes": 4194304,
            "write_max_bytes": 16777216,
            "max_concurrent_calls": 256,
            "max_timeout_ms": 600000,
            "connections": {"streams_per_connection": 100, "handshake_timeout_ms": 10000, "idle_timeout_ms": 60000},
            "open_services": {"calls_per_connection": 4, "max_watches": 64, "max_reflection_streams": 16, "timeout_ms": 10000},
        },
        "auth": {},
        "shutdown": {"drain_delay_ms": 1000, "grace_period_ms": 10000},
    }
    assert load_config({"server": section})["server"]["limits"]["connections"]["streams_per_connection"] == 100
    with pytest.raises(ConfigError, match=r'"server.limits.connections.max" is set; the PyTorch learner serves with grpcio, which cannot cap connections'):
        load_config({"server": {"limits": {"connections": {"max": 10}}}})


def test_held_watches_leave_health_checks_and_learner_calls_answering():
    learner = LearnerProcess({})
    channels = [grpc.insecure_channel(learner.address) for _ in range(12)]
    watches, errors = [], []
    try:
        for channel in channels:
            call = channel.unary_stream(
                "/grpc.health.v1.Health/Watch",
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=M("grpc.health.v1.HealthCheckResponse").FromString,
            )(M("grpc.health.v1.HealthCheckRequest")(service=""), timeout=30)
            watches.append(call)

        def first(call):
            try:
                next(call)
            except grpc.RpcError as error:
                errors.append(error.code())

        readers = [threading.Thread(target=first, args=(call,)) for call in watches]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(timeout=10)
        # Four of the sixteen threads at most; the rest were refused.
        assert errors.count(grpc.StatusCode.RESOURCE_EXHAUSTED) == len(watches) - 4
        health = learner.unary(
            "Check", M("grpc.health.v1.HealthCheckRequest")(service=""), "grpc.health.v1.HealthCheckResponse", service="grpc.health.v1.Health"
        )
        assert health.status == 1
        status = learner.unary("GetStatus", M("leangrpo.v1.GetStatusRequest")(), "leangrpo.v1.GetStatusResponse")
        assert status.step == 0
    finally:
        for call in watches:
            call.cancel()
        for channel in channels:
            channel.close()
        assert learner.stop() == 0
