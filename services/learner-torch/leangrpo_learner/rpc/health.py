"""grpc.health.v1.Health: SERVING for "" and every served service while the server runs."""
from __future__ import annotations

import threading

import grpc

from .. import proto

Request = proto.message("grpc.health.v1.HealthCheckRequest")
Response = proto.message("grpc.health.v1.HealthCheckResponse")
SERVING = Response.DESCRIPTOR.enum_values_by_name["SERVING"].number
NOT_SERVING = Response.DESCRIPTOR.enum_values_by_name["NOT_SERVING"].number
SERVICE_UNKNOWN = Response.DESCRIPTOR.enum_values_by_name["SERVICE_UNKNOWN"].number


class Health:
    def __init__(self, services: list[str]):
        self.services = set(services) | {""}
        self.serving = True
        self.changed = threading.Condition()

    def set_serving(self, serving: bool) -> None:
        with self.changed:
            self.serving = serving
            self.changed.notify_all()

    def _status(self, service: str) -> int:
        if service not in self.services:
            return SERVICE_UNKNOWN
        return SERVING if self.serving else NOT_SERVING

    def check(self, request, context):
        if request.service not in self.services:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
        return Response(status=self._status(request.service))

    def watch(self, request, context):
        last = None
        while context.is_active():
            status = self._status(request.service)
            if status != last:
                yield Response(status=status)
                last = status
            with self.changed:
                self.changed.wait(timeout=1.0)

    def handler(self, budget) -> grpc.GenericRpcHandler:
        return grpc.method_handlers_generic_handler(
            "grpc.health.v1.Health",
            {
                "Check": grpc.unary_unary_rpc_method_handler(budget.unary(self.check), Request.FromString, Response.SerializeToString),
                "Watch": grpc.unary_stream_rpc_method_handler(budget.stream("watch", self.watch), Request.FromString, Response.SerializeToString),
            },
        )
