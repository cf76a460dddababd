"""Latency and throughput of the served pipeline, and where the time goes between its models.

The client side times each request from send to answer; the server side is Triton's own statistics, read before
and after the run, so each model's share (queue and compute time per request) covers exactly the benchmark's
requests, provided nothing else uses the server meanwhile. Figures, never assertions: a shared machine is noisy,
so compare photos or settings as ratios measured in the same run.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from dataclasses import dataclass

import numpy as np

from plates.exceptions import InvalidInputError
from plates.readiness import normalize_url

MODELS = ("plate_recognition", "yolo", "stn", "lprnet")


@dataclass(frozen=True)
class Latency:
    requests: int
    seconds: float  # wall time of the whole run
    p50_ms: float
    p90_ms: float
    p99_ms: float
    mean_ms: float

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds


@dataclass(frozen=True)
class ModelTime:
    model: str
    requests: int  # requests the model answered; the orchestrator sends each sub-model one per photo
    items: int  # what those requests held: a request of 15 plate crops is 15
    executions: int  # times it ran: fewer than requests where Triton batched them together
    queue_ms: float  # per request
    compute_ms: float  # per request: input, infer and output


def summarize(latencies_s: list[float], seconds: float) -> Latency:
    if not latencies_s:
        raise InvalidInputError("no requests were timed")
    ms = np.asarray(latencies_s, dtype=np.float64) * 1000.0
    p50, p90, p99 = np.percentile(ms, [50, 90, 99])
    return Latency(len(ms), seconds, float(p50), float(p90), float(p99), float(ms.mean()))


def model_statistics(url: str, model: str) -> dict:
    """Triton's statistics of `model` (all versions), as its HTTP endpoint gives them."""
    with urllib.request.urlopen(f"{normalize_url(url)}/v2/models/{model}/stats", timeout=10) as response:
        return json.load(response)


def _totals(stats: dict) -> np.ndarray:
    """Requests, items, executions, queue ns and compute ns of one model, over its versions."""
    totals = np.zeros(5, dtype=np.int64)
    for version in stats.get("model_stats", []):
        stages = version.get("inference_stats", {})

        def ns(stage: str) -> int:
            return int(stages.get(stage, {}).get("ns", 0))

        totals += [
            int(stages.get("success", {}).get("count", 0)),
            int(version.get("inference_count", 0)),
            int(version.get("execution_count", 0)),
            ns("queue"),
            ns("compute_input") + ns("compute_infer") + ns("compute_output"),
        ]
    return totals


def model_time(model: str, before: dict, after: dict) -> ModelTime:
    """One model's share of a run, from its Triton statistics before and after it."""
    requests, items, executions, queue, compute = (int(v) for v in _totals(after) - _totals(before))
    per = max(requests, 1) * 1e6
    return ModelTime(model, requests, items, executions, queue / per, compute / per)


def run_requests(send, requests: int, concurrency: int) -> tuple[list[float], float]:
    """Call `send()` `requests` times from `concurrency` threads; each request's seconds, and the run's."""
    latencies: list[float] = []
    errors: list[Exception] = []
    remaining = iter(range(requests))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if errors or next(remaining, None) is None:
                    return
            start = time.perf_counter()
            try:
                send()
            except Exception as error:  # handed to the caller, which knows what the request was
                with lock:
                    errors.append(error)
                return
            with lock:
                latencies.append(time.perf_counter() - start)

    threads = [threading.Thread(target=worker) for _ in range(min(concurrency, requests))]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return latencies, time.perf_counter() - start


def format_run(label: str, latency: Latency, models: list[ModelTime], concurrency: int) -> str:
    lines = [
        f"{label}: {latency.requests} requests, concurrency {concurrency}: {latency.throughput:.2f} req/s, "
        f"latency p50 {latency.p50_ms:.1f} ms, p90 {latency.p90_ms:.1f} ms, p99 {latency.p99_ms:.1f} ms, "
        f"mean {latency.mean_ms:.1f} ms"
    ]
    for m in models:
        lines.append(
            f"  {m.model:<17} {m.requests:>5} requests ({m.items:>5} items) in {m.executions:>5} executions: "
            f"queue {m.queue_ms:.1f} ms, compute {m.compute_ms:.1f} ms per request"
        )
    return "\n".join(lines)


def format_wire(name: str, file_bytes: int, pixel_bytes: int, file_p50_ms: float, pixel_p50_ms: float) -> str:
    """One photo sent both ways, side by side: request bytes on the wire and p50 latency."""
    return (
        f"{name}: on the wire {file_bytes:,} B as file, {pixel_bytes:,} B as pixels ({pixel_bytes / file_bytes:.1f} "
        f"times more); p50 latency {file_p50_ms:.1f} ms as file, {pixel_p50_ms:.1f} ms as pixels"
    )
