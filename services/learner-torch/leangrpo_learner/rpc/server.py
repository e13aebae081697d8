"""Starts the gRPC server: LearnerService, health and reflection (v1 and v1alpha), with the
config's message-size, concurrency, auth and TLS settings."""
from __future__ import annotations

import hashlib
import hmac
from concurrent import futures

import grpc

from ..exposure import read_tls_files
from .health import Health
from .learner_host import LearnerHost
from .learner_service import SERVICE, LearnerServicer
from .open_budget import OpenServiceBudget
from .reflection import Reflection
from .tracing import RpcTracing

# Each call runs on one of these threads for as long as it lasts.
WORKERS = 16

SERVICES = [SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]


class BearerTokenInterceptor(grpc.ServerInterceptor):
    """server.auth.token: every call but health and reflection must carry `authorization: Bearer <token>`.
    Health stays open for probes; reflection describes only the public contract (as the
    TypeScript services do). The token is compared in constant time, over digests so that
    its length does not show either."""

    def __init__(self, token: str):
        self.expected = _digest(f"Bearer {token}")

        def deny(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token (server.auth.token is set)")

        self.deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(self, continuation, details):
        if details.method.startswith(OPEN_PREFIXES):
            return continuation(details)
        given = dict(details.invocation_metadata).get("authorization", "")
        if isinstance(given, str) and hmac.compare_digest(_digest(given), self.expected):
            return continuation(details)
        return self.deny


OPEN_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.v1.ServerReflection/", "/grpc.reflection.v1alpha.ServerReflection/")


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8")).digest()


def start_server(config: dict, host: LearnerHost, tracing: RpcTracing | None = None) -> tuple[grpc.Server, int, Health]:
    server_config = config["server"]
    limits = server_config["limits"]
    # Tracing first, so a call refused by auth is a span too.
    interceptors = [tracing.interceptor()] if tracing else []
    if server_config["auth"]["token"]:
        interceptors.append(BearerTokenInterceptor(server_config["auth"]["token"]))
    connections = limits["connections"]
    options = [
        ("grpc.max_receive_message_length", limits["read_max_bytes"]),
        ("grpc.max_send_message_length", limits["write_max_bytes"]),
        ("grpc.max_concurrent_streams", connections["streams_per_connection"]),
    ]
    if connections["idle_timeout_ms"] > 0:
        options.append(("grpc.max_connection_idle_ms", connections["idle_timeout_ms"]))
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=WORKERS),
        interceptors=interceptors,
        options=options,
        maximum_concurrent_rpcs=limits["max_concurrent_calls"] or None,
    )
    health = Health(SERVICES)
    reflection = Reflection(SERVICES)
    budget = OpenServiceBudget(limits["open_services"], WORKERS)
    server.add_generic_rpc_handlers(
        (
            LearnerServicer(host).handler(),
            health.handler(budget),
            reflection.handler("grpc.reflection.v1", budget),
            reflection.handler("grpc.reflection.v1alpha", budget),
        )
    )
    address = f"{server_config['host']}:{server_config['port']}"
    tls_files = read_tls_files(server_config["tls"])
    if tls_files:
        port = server.add_secure_port(address, grpc.ssl_server_credentials([tls_files]))
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    server.start()
    return server, port, health
