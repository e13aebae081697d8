"""The learner continues its callers' traces: the W3C traceparent is parsed, its trace id is
passed through to the call's log line, and with OpenTelemetry's SDK installed each call is a
SERVER span exported as OTLP to a loopback sink (that test skips, saying so, without the SDK)."""
import http.server
import importlib.util
import threading

import pytest
from server_process import LearnerProcess

from leangrpo_learner import proto
from leangrpo_learner.rpc.tracing import exporting_requested, parse_traceparent

M = proto.message
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


HAS_SDK = _installed("opentelemetry.sdk") and _installed("opentelemetry.exporter.otlp.proto.http")


def test_parse_traceparent_accepts_w3c_and_refuses_the_rest():
    assert parse_traceparent(TRACEPARENT) == (TRACE_ID, PARENT_ID)
    assert parse_traceparent(TRACEPARENT.upper()) == (TRACE_ID, PARENT_ID)
    for bad in (None, "", "00-xyz", f"ff-{TRACE_ID}-{PARENT_ID}-01", f"00-{'0' * 32}-{PARENT_ID}-01", f"00-{TRACE_ID}-{'0' * 16}-01"):
        assert parse_traceparent(bad) is None, bad


def test_exporting_follows_the_otel_variables():
    assert not exporting_requested({})
    assert exporting_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"})
    assert exporting_requested({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"})
    assert not exporting_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"})
    assert not exporting_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"})


def get_status(process, metadata=()):
    call = process.channel.unary_unary(
        "/leangrpo.v1.LearnerService/GetStatus",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=M("leangrpo.v1.GetStatusResponse").FromString,
    )
    return call(M("leangrpo.v1.GetStatusRequest")(), metadata=metadata, timeout=30)


@pytest.mark.skipif(HAS_SDK, reason="the OpenTelemetry SDK is installed: the learner exports spans instead (test below)")
def test_without_the_sdk_the_callers_trace_id_reaches_the_log_and_a_note_says_why_no_span():
    # Port 9 (discard): nothing may be sent there anyway without the SDK.
    process = LearnerProcess({}, env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    try:
        assert get_status(process, metadata=(("traceparent", TRACEPARENT),)).step == 0
        get_status(process)  # an untraced call: no line
    finally:
        assert process.stop() == 0
    stderr = process.process.stderr.read()
    assert "the OpenTelemetry SDK is not installed" in stderr
    served = [line for line in stderr.splitlines() if "served /leangrpo.v1.LearnerService/GetStatus" in line]
    assert len(served) == 1
    assert served[0].endswith(f"trace_id={TRACE_ID}")


class _Sink(http.server.BaseHTTPRequestHandler):
    bodies: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        _Sink.bodies.append((self.path, self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.skipif(not HAS_SDK, reason="needs opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http (not in Debian)")
def test_with_the_sdk_each_call_is_a_server_span_in_the_callers_trace_flushed_at_stop():
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    sink = http.server.HTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    try:
        process = LearnerProcess({}, env={"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink.server_port}"})
        try:
            get_status(process, metadata=(("traceparent", TRACEPARENT),))
        finally:
            assert process.stop() == 0
    finally:
        sink.shutdown()
    spans = []
    for path, body in _Sink.bodies:
        assert path == "/v1/traces"
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                spans.extend(scope_spans.spans)
    (span,) = [s for s in spans if s.name == "leangrpo.v1.LearnerService/GetStatus"]
    assert span.trace_id.hex() == TRACE_ID and span.parent_span_id.hex() == PARENT_ID
    assert span.kind == 2  # SERVER
