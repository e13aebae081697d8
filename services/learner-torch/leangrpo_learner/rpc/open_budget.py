"""Budgets of the services open without a token (health, reflection), as the TypeScript services
have them (server.limits.open_services): a few calls at once per connection, and a cap on
Health.Watch streams and reflection streams in all. Here each call holds one of the server's
worker threads for as long as it lasts, so the caps in all are also kept under a quarter of the
workers each: anonymous watches can never take the threads a health check or a training step
needs."""
from __future__ import annotations

import threading

import grpc


class OpenServiceBudget:
    def __init__(self, limits: dict, workers: int):
        self.per_connection = limits["calls_per_connection"]
        self.caps = {
            "watch": min(limits["max_watches"], max(1, workers // 4)),
            "reflection": min(limits["max_reflection_streams"], max(1, workers // 4)),
        }
        self.lock = threading.Lock()
        self.by_connection: dict[str, int] = {}
        self.open = {"watch": 0, "reflection": 0}

    def _take(self, kind: str | None, context) -> str | None:
        """None when the call may go on; else why it may not."""
        peer = context.peer()
        with self.lock:
            held = self.by_connection.get(peer, 0)
            if held >= self.per_connection:
                return (
                    f"this connection has {held} health or reflection calls open, its maximum "
                    "(server.limits.open_services.calls_per_connection); finish one first"
                )
            if kind is not None and self.open[kind] >= self.caps[kind]:
                key = "max_watches" if kind == "watch" else "max_reflection_streams"
                return (
                    f"{self.caps[kind]} {kind} streams are open, this learner's maximum "
                    f"(server.limits.open_services.{key}, at most a quarter of its worker threads); retry later"
                )
            self.by_connection[peer] = held + 1
            if kind is not None:
                self.open[kind] += 1
        return None

    def _give_back(self, kind: str | None, context) -> None:
        peer = context.peer()
        with self.lock:
            left = self.by_connection.get(peer, 1) - 1
            if left > 0:
                self.by_connection[peer] = left
            else:
                self.by_connection.pop(peer, None)
            if kind is not None:
                self.open[kind] -= 1

    def unary(self, behavior):
        """A quick call (Health.Check): counted per connection only."""

        def guarded(request, context):
            refused = self._take(None, context)
            if refused:
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
            try:
                return behavior(request, context)
            finally:
                self._give_back(None, context)

        return guarded

    def stream(self, kind: str, behavior):
        """A stream that may last (Health.Watch, reflection): counted per connection and in all."""

        def guarded(request_or_requests, context):
            refused = self._take(kind, context)
            if refused:
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
            try:
                yield from behavior(request_or_requests, context)
            finally:
                self._give_back(kind, context)

        return guarded
