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
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from plates.client.readiness import normalize_url
from plates.exceptions import InvalidInputError, OverloadedError, PlatesError, ServerUnavailableError

MODELS = ("plate_recognition", "yolo", "stn", "lprnet", "lprnet_rows")


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


@dataclass
class Outcomes:
    """What one run's requests came to, each with its seconds from send to answer."""

    accepted: list[float] = field(default_factory=list)
    refused: list[float] = field(default_factory=list)  # OverloadedError: the server's "try later"
    failed: list[PlatesError] = field(default_factory=list)  # any other error the server answered
    seconds: float = 0.0  # wall time of the whole run

    @property
    def slowest_s(self) -> float:
        return max(self.accepted + self.refused, default=0.0)


def run_requests(
    send,
    requests: int | None,
    concurrency: int,
    duration_s: float | None = None,
    pause: Callable[[int], float] = lambda retry: 0.0,
) -> Outcomes:
    """Call `send()` `requests` times, or for `duration_s` seconds, from `concurrency` threads.

    A refusal is counted, not retried (`send` must not retry either); after its k-th refusal in a row (from 0) the
    thread waits `pause(k)` seconds before its next request, as a client that backs off would (RetryPolicy.pause).
    A failure is counted and the run goes on; ServerUnavailableError other than a refusal (no server answers) and
    errors that are not PlatesError stop it and are raised.
    """
    outcomes = Outcomes()
    fatal: list[Exception] = []
    remaining = iter(range(requests)) if requests is not None else iter(int, 1)  # iter(int, 1): endless
    lock = threading.Lock()
    start = time.perf_counter()
    deadline = start + duration_s if duration_s is not None else float("inf")

    def worker() -> None:
        refusals = 0
        while True:
            with lock:
                if fatal or next(remaining, None) is None or time.perf_counter() >= deadline:
                    return
            sent = time.perf_counter()
            try:
                send()
                kind, refusals = outcomes.accepted, 0
            except OverloadedError:
                kind, refusals = outcomes.refused, refusals + 1
            except PlatesError as error:
                if isinstance(error, ServerUnavailableError):
                    with lock:
                        fatal.append(error)
                    return
                with lock:
                    outcomes.failed.append(error)
                continue
            except Exception as error:  # handed to the caller, which knows what the request was
                with lock:
                    fatal.append(error)
                return
            with lock:
                kind.append(time.perf_counter() - sent)
            if refusals:
                time.sleep(max(0.0, min(pause(refusals - 1), deadline - time.perf_counter())))

    threads = [threading.Thread(target=worker) for _ in range(min(concurrency, requests or concurrency))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if fatal:
        raise fatal[0]
    outcomes.seconds = time.perf_counter() - start
    return outcomes


# An accepted request slower than this has most likely waited out Triton 2.51's half-second dynamic-batcher stall
# (docs/performance.md): on the 2-core machine photos take 30-100 ms at concurrency 1, up to ~250 ms at 2.
STALLED_S = 0.3


def format_outcomes(outcomes: Outcomes, timeout_s: float) -> str:
    """Accepted, refused and failed counts, how fast refusals came back, how many accepted requests took over
    STALLED_S, and the slowest request against the client's timeout."""
    refused = f"p99 {np.percentile(np.asarray(outcomes.refused) * 1000.0, 99):.1f} ms" if outcomes.refused else "none"
    stalled = sum(seconds > STALLED_S for seconds in outcomes.accepted)
    return (
        f"  accepted {len(outcomes.accepted)} ({stalled} over {STALLED_S:g} s), refused {len(outcomes.refused)} "
        f"({refused}), failed {len(outcomes.failed)}; slowest {outcomes.slowest_s * 1000.0:.0f} ms "
        f"of the client's {timeout_s:g} s timeout"
    )


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


def format_first(name: str, first_ms: float, p50_ms: float) -> str:
    """The first request a server answered beside its steady p50 (the goal: at most 1.5 times)."""
    return f"{name}: first request {first_ms:.1f} ms, steady p50 {p50_ms:.1f} ms ({first_ms / p50_ms:.2f} times)"


@dataclass
class SideBySide:
    """One photo served and in one process, alternately, request by request: both meet the same machine load."""

    served: list[float] = field(default_factory=list)  # seconds per request, send to answer
    in_process: list[float] = field(default_factory=list)
    stages: list[dict[str, float]] = field(default_factory=list)  # seconds per stage, per in-process run
    # With the detector alone: the photo's pixels sent to the pipeline, and to the detector model directly.
    served_pixels: list[float] = field(default_factory=list)
    detector_served: list[float] = field(default_factory=list)


def side_by_side(
    serve: Callable[[], object],
    run: Callable[[], dict[str, float]],
    requests: int,
    detector: tuple[Callable[[], object], Callable[[], object]] | None = None,
) -> SideBySide:
    """Time `serve()` and `run()` (which returns its seconds per stage) `requests` times each, one after the
    other; with `detector` (the pipeline served the photo's pixels, the detector model served them alone), those
    two as well, in the same turns."""
    result = SideBySide()
    calls = [(serve, result.served), (run, result.in_process)]
    if detector is not None:
        calls += [(detector[0], result.served_pixels), (detector[1], result.detector_served)]
    for _ in range(requests):
        for call, times in calls:
            start = time.perf_counter()
            answer = call()
            times.append(time.perf_counter() - start)
            if call is run:
                result.stages.append(answer)
    return result


def format_side_by_side(name: str, result: SideBySide) -> str:
    served, local = (float(np.median(times)) * 1000.0 for times in (result.served, result.in_process))
    stages = ", ".join(
        f"{stage} {np.median([s[stage] for s in result.stages]) * 1000.0:.1f}" for stage in result.stages[0]
    )
    detector = float(np.median([s["detector"] for s in result.stages])) * 1000.0
    lines = [
        f"{name}: served and in one process, alternately, {len(result.served)} each: p50 {served:.1f} ms served, "
        f"{local:.1f} ms in one process; serving adds {(served / local - 1) * 100:+.1f} %; "
        f"served takes {served / detector:.2f} times the detector stage in one process",
        f"  in one process, p50 per stage in ms: {stages}",
    ]
    if result.detector_served:
        pipeline, alone = (float(np.median(t)) * 1000.0 for t in (result.served_pixels, result.detector_served))
        lines.append(
            f"  its pixels, served: p50 {pipeline:.1f} ms through the pipeline, {alone:.1f} ms through the detector "
            f"alone (yolo called directly): the pipeline takes {pipeline / alone:.2f} times the detector alone"
        )
    return "\n".join(lines)


def format_sweep(levels: dict[int, Outcomes]) -> str:
    """The sustainable concurrency, the highest measured level where the server refused nothing, and every higher
    level's accepted p99 as a multiple of its p99: how well the queue bounds hold the latency of what is served."""
    p99 = {c: float(np.percentile(o.accepted, 99)) * 1000.0 for c, o in levels.items() if o.accepted}
    clean = [c for c, o in levels.items() if not o.refused and not o.failed and o.accepted]
    if not clean:
        return "sustainable concurrency: none measured (every level had refusals or failures)"
    sustainable = max(clean)
    lines = [
        f"sustainable concurrency (the highest with nothing refused): {sustainable}, "
        f"accepted p99 {p99[sustainable]:.0f} ms"
    ]
    for level in sorted(c for c in levels if c > sustainable):
        ratio = f"{p99[level] / p99[sustainable]:.2f}x" if level in p99 else "none accepted"
        lines.append(
            f"  concurrency {level} ({level / sustainable:g}x): accepted p99 {ratio} of that, "
            f"{len(levels[level].refused)} of {len(levels[level].accepted) + len(levels[level].refused)} refused"
        )
    return "\n".join(lines)


def merge(runs: list[Outcomes]) -> Outcomes:
    """Runs of the same requests taken in turns with others, as one: their requests and their seconds added up."""
    merged = Outcomes()
    for run in runs:
        merged.accepted += run.accepted
        merged.refused += run.refused
        merged.failed += run.failed
        merged.seconds += run.seconds
    return merged


def format_gateway(name: str, concurrency: int, direct: Outcomes, gateway: Outcomes, api: str = "snapshot") -> str:
    """One photo through Triton direct and through one of the gateway's APIs: p50s, throughputs and what the gateway
    costs."""
    if not direct.accepted or not gateway.accepted:
        return f"{name}: concurrency {concurrency}: gateway ({api}) or direct had no accepted request"
    a, b = summarize(direct.accepted, direct.seconds), summarize(gateway.accepted, gateway.seconds)
    return (
        f"{name}: concurrency {concurrency}, {a.requests} direct and {b.requests} through the gateway's {api} API, in "
        "turns: "
        f"p50 {a.p50_ms:.1f} / {b.p50_ms:.1f} ms (gateway adds {b.p50_ms - a.p50_ms:+.1f} ms), "
        f"{a.throughput:.2f} / {b.throughput:.2f} req/s (gateway {(b.throughput / a.throughput - 1) * 100:+.1f} %); "
        f"refused {len(direct.refused)} / {len(gateway.refused)}"
    )
