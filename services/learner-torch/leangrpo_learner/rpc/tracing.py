"""Tracing of the learner's RPCs, as the TS services trace theirs (services/kit/src/telemetry).

Each call continues the caller's W3C `traceparent`. With OpenTelemetry's Python SDK and its
OTLP/HTTP exporter installed (`pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http`)
and OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) set, every call is a SERVER span
with the rpc.* attributes, exported as OTLP and flushed when the server stops. Without the
SDK (Debian's python3 has none) the caller's trace id is still passed through to the log
lines of the call (`trace_id=...`), and a note at start says why no span leaves this process.
The learner makes no outgoing calls, so there is no context to pass further on.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import re
import time

import grpc

log = logging.getLogger("leangrpo_learner")

UNTRACED_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.")
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")

# The trace id of the call this thread is serving ("" outside a traced call).
current_trace_id: contextvars.ContextVar[str] = contextvars.ContextVar("current_trace_id", default="")


def parse_traceparent(value: str | None) -> tuple[str, str] | None:
    """(trace id, parent span id) of a W3C traceparent header; None when absent or malformed."""
    match = _TRACEPARENT.match((value or "").strip().lower())
    if not match or match.group(1) == "ff" or set(match.group(2)) == {"0"} or set(match.group(3)) == {"0"}:
        return None
    return match.group(2), match.group(3)


def exporting_requested(env=os.environ) -> bool:
    return (
        env.get("OTEL_SDK_DISABLED", "").lower() != "true"
        and env.get("OTEL_TRACES_EXPORTER", "") != "none"
        and bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    )


class TraceIdLogFilter(logging.Filter):
    """Adds `trace` (" trace_id=<id>" inside a traced call, else "") to every log record."""

    def filter(self, record: logging.LogRecord) -> bool:
        trace_id = current_trace_id.get()
        record.trace = f" trace_id={trace_id}" if trace_id else ""
        return True


class RpcTracing:
    """The server's tracing: an interceptor for grpc.server, and shutdown() to flush spans."""

    def __init__(self, env=os.environ):
        self.provider = None
        self.tracer = None
        if not exporting_requested(env):
            return
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            log.warning(
                "OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK is not installed "
                "(pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http): the learner's "
                "spans are not exported; callers' traces stay whole without them, and its log lines carry their trace_id"
            )
            return
        # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES over these.
        resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "lean-grpo-learner", "service.namespace": "lean-grpo"})
        self.provider = TracerProvider(resource=resource)
        # The exporter reads the endpoint, headers and timeout from OTEL_* itself.
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        self.tracer = self.provider.get_tracer("leangrpo_learner")

    def interceptor(self) -> grpc.ServerInterceptor:
        return _TracingInterceptor(self.tracer)

    def shutdown(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()  # flushes what the batch processor holds


class _TracingInterceptor(grpc.ServerInterceptor):
    def __init__(self, tracer):
        self.tracer = tracer

    def intercept_service(self, continuation, details):
        handler = continuation(details)
        if handler is None or details.method.startswith(UNTRACED_PREFIXES):
            return handler
        metadata = dict(details.invocation_metadata)

        def scope(context):
            return _call_scope(self.tracer, details.method, metadata, context)

        def unary(behavior):
            def handle(request, context):
                with scope(context):
                    return behavior(request, context)

            return handle

        def streaming(behavior):
            def handle(request, context):
                with scope(context):
                    yield from behavior(request, context)

            return handle

        codecs = (handler.request_deserializer, handler.response_serializer)
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(unary(handler.unary_unary), *codecs)
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(streaming(handler.unary_stream), *codecs)
        if handler.stream_unary:
            return grpc.stream_unary_rpc_method_handler(unary(handler.stream_unary), *codecs)
        return grpc.stream_stream_rpc_method_handler(streaming(handler.stream_stream), *codecs)


@contextlib.contextmanager
def _call_scope(tracer, method: str, metadata: dict, context):
    """One call: the caller's trace id for the log lines, and with the SDK a SERVER span."""
    caller = parse_traceparent(metadata.get("traceparent"))
    token = current_trace_id.set(caller[0] if caller else "")
    started = time.monotonic()
    try:
        if tracer is None:
            yield
            # Without spans, a line per traced call carries the caller's trace id (the log filter adds it).
            if caller:
                log.info("served %s in %.0f ms", method, (time.monotonic() - started) * 1000)
            return
        from opentelemetry import propagate, trace

        service, _, name = method.lstrip("/").partition("/")
        with tracer.start_as_current_span(
            f"{service}/{name}",
            context=propagate.extract(metadata),
            kind=trace.SpanKind.SERVER,
            attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": name},
        ) as span:
            current_trace_id.set(format(span.get_span_context().trace_id, "032x"))
            yield
            code = context.code() if hasattr(context, "code") else None
            span.set_attribute("rpc.grpc.status_code", code.value[0] if isinstance(code, grpc.StatusCode) else 0)
    finally:
        current_trace_id.reset(token)
