"""The gateway's Prometheus metrics, in a registry of its own (one per app: tests build many apps in one process)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

# From a refused request (well under a millisecond) to a large photo on a busy CPU server (seconds).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    def __init__(
        self, in_flight: Callable[[], int], waiting: Callable[[], int], reloading: Callable[[], int] = lambda: 0
    ) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "plates_gateway_requests",
            "Requests answered, by route and HTTP status",
            ["route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "plates_gateway_request_seconds",
            "Seconds from a request's headers to its answer, by route",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.refusals = Counter(
            "plates_gateway_refusals",
            "Requests refused, by cause (the error code of the answer)",
            ["cause"],
            registry=self.registry,
        )
        in_flight_gauge = Gauge(
            "plates_gateway_in_flight", "Photos accepted: at Triton or waiting their turn", registry=self.registry
        )
        in_flight_gauge.set_function(in_flight)
        waiting_gauge = Gauge("plates_gateway_waiting", "Photos waiting their turn at Triton", registry=self.registry)
        waiting_gauge.set_function(waiting)
        reloading_gauge = Gauge(
            "plates_gateway_models_reloading",
            "Models of Triton its supervisor is loading again, at the last health check",
            registry=self.registry,
        )
        reloading_gauge.set_function(reloading)

    def answered(self, route: str, status: int, seconds: float, refusal: str | None = None) -> None:
        self.requests.labels(route, str(status)).inc()
        self.latency.labels(route).observe(seconds)
        if refusal is not None:
            self.refusals.labels(refusal).inc()

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
