"""The first request once a server says it is ready, against the steady p50: what a client that waits on readiness
(perf_analyzer, a script, a Kubernetes Service) meets. The figures of docs/health.md (Warm before ready).

Each round starts a server from this checkout and, with --baseline, from another one (main's, exported with `git
archive`), in turns: a bare one (plates.server.launcher.LocalServer: no supervisor, so nothing warms it but Triton
itself), whose /v2/health/ready is polled; or with --serve, `plates serve` (the supervisor, which warms it, and the
gateway), whose gateway's /readyz is polled, as Kubernetes' probes and a user's script do. A client (PlatesClient, as
`plates bench --cold` times it) opens its connection, polls every 50 ms, times one car.jpg the moment readiness
answers 200, then 3 unmeasured requests and `--requests` measured ones for the steady p50.

    git archive 6a31a35 | tar -x -C /tmp/plates-main     # into an empty folder
    poetry run python benchmarks/first_request.py --baseline /tmp/plates-main --rounds 4 [--serve] [--busy 1]

--busy N runs N processes that each keep a core busy beside the servers, for the whole run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from baseline import baseline_python, busy_beside, serving  # noqa: E402
from conftest import SAMPLES  # noqa: E402

from plates.client.retry import NO_RETRY  # noqa: E402
from plates.client.service import PlatesClient  # noqa: E402

WARMUP = 3


def first_and_steady(tree: Path, python: str, photo: bytes, measured: int, serve: bool) -> tuple[float, float, float]:
    """A server of `tree` started: seconds to ready, the first request's ms and the steady p50's."""
    with serving(tree, python, serve) as served, PlatesClient(served.url, timeout=60, retry=NO_RETRY) as client:
        ready_s = served.wait_ready(client)
        sent = time.perf_counter()
        client.recognize(photo)
        first_ms = (time.perf_counter() - sent) * 1000
        for _ in range(WARMUP):
            client.recognize(photo)
        steady = []
        for _ in range(measured):
            sent = time.perf_counter()
            client.recognize(photo)
            steady.append((time.perf_counter() - sent) * 1000)
    return ready_s, first_ms, statistics.median(steady)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure in turns with this one (main's)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=30, help="measured requests for the steady p50 (default 30)")
    parser.add_argument("--busy", type=int, default=0, help="CPU-heavy jobs to run beside the servers (default 0)")
    parser.add_argument("--serve", action="store_true", help="plates serve, ready at its gateway's /readyz")
    args = parser.parse_args(argv)
    with busy_beside(args.busy):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    photo = (SAMPLES / "car.jpg").read_bytes()
    trees = {"this": (ROOT, sys.executable)}
    if args.baseline:
        tree = args.baseline.resolve()
        trees = {"baseline": (tree, baseline_python(tree)), **trees}
    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for round in range(1, args.rounds + 1):
        for name, (tree, python) in trees.items():
            ready_s, first_ms, p50_ms = first_and_steady(tree, python, photo, args.requests, args.serve)
            runs[name].append((first_ms, p50_ms))
            print(
                f"round {round} {name:8}: ready in {ready_s:5.1f} s; car.jpg first request {first_ms:6.1f} ms, "
                f"steady p50 {p50_ms:6.1f} ms ({first_ms / p50_ms:.2f} times)",
                flush=True,
            )
    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    for name, pairs in runs.items():
        ratios = [first / p50 for first, p50 in pairs]
        first, p50 = (statistics.median(values) for values in zip(*pairs))
        print(
            f"{name:8}: first / p50 {min(ratios):.2f} to {max(ratios):.2f}, median {statistics.median(ratios):.2f}; "
            f"median first {first:.1f} ms against median p50 {p50:.1f} ms ({first / p50:.2f} times)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
