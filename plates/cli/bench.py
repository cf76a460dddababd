"""plates bench IMAGE [IMAGE ...] [--url localhost:8000] [--requests 50 | --duration S] [--concurrency 1 [2 ...]]:
time the service, and how it holds up under load.

Each photo is sent `--requests` times (or for `--duration` seconds) at each `--concurrency` level, after a few
unmeasured warm-up requests; for each, the client's latency percentiles and throughput, how many requests the
server accepted and refused (a refusal is counted, never retried), and each model's queue and compute time per
request from Triton's statistics. With several levels, the sustainable concurrency and how latency holds above it.
Where the server runs on this machine, its processes' memory at the start and end (a soak: --duration).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from plates.benchmark import (
    MODELS,
    format_outcomes,
    format_run,
    format_sweep,
    model_statistics,
    model_time,
    run_requests,
    summarize,
)
from plates.cli.client import add_url_option
from plates.client_threads import ThreadLocalClients
from plates.exceptions import InvalidInputError, PlatesError, naming
from plates.images import read_image
from plates.readiness import require_ready
from plates.retry import NO_RETRY, RetryPolicy
from plates.server.processes import format_growth, memory, server_processes


def add_bench_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "bench",
        help="latency, throughput, refusals under load and per-model time of the served pipeline on photos",
        description=__doc__.split("\n", 3)[3].strip(),
    )
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photo files, each timed on its own")
    add_url_option(parser)
    parser.add_argument("--requests", type=int, default=50, help="measured requests per photo and level (default 50)")
    parser.add_argument(
        "--duration", type=float, metavar="S", help="send for S seconds per photo and level instead of --requests"
    )
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[1], metavar="N", help="requests in flight at once; several "
        "levels run one after the other (default 1)"
    )
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured requests per photo first (default 3)")
    parser.add_argument("--timeout", type=float, default=60.0, help="the client's timeout in seconds (default 60)")
    parser.set_defaults(run=run_bench)
    return parser


def run_bench(args: argparse.Namespace) -> int:
    if args.requests < 1 or min(args.concurrency) < 1 or args.warmup < 0 or args.timeout <= 0:
        raise InvalidInputError(
            f"--requests ({args.requests}) and --concurrency ({' '.join(map(str, args.concurrency))}) must be at "
            f"least 1, --warmup ({args.warmup}) at least 0, --timeout ({args.timeout}) above 0"
        )
    if args.duration is not None and args.duration <= 0:
        raise InvalidInputError(f"--duration ({args.duration}) must be above 0 seconds")
    images = {}
    for path in args.images:
        with naming(f"photo {path}"):
            images[path] = read_image(path)
    require_ready(args.url)

    p50s, failures = {}, []
    # A refused thread waits as PlatesClient would before a retry. Without it, on the 2-core machine, 15 threads
    # resending at once had the server spend its CPU on refusing (1 MB photos): 0.7 accepted req/s instead of 4.7.
    backoff = RetryPolicy()
    with ThreadLocalClients(args.url, timeout=args.timeout, retry=NO_RETRY) as clients:
        for path, image in images.items():
            with naming(f"photo {path}"):
                for _ in range(args.warmup):
                    clients.recognize(image)
        processes = server_processes(args.url)
        start_memory = memory(processes)
        for path, image in images.items():
            levels = {}
            for concurrency in args.concurrency:
                with naming(f"photo {path}"):
                    before = {m: model_statistics(args.url, m) for m in MODELS}
                    requests = None if args.duration is not None else args.requests
                    outcomes = run_requests(
                        lambda: clients.recognize(image), requests, concurrency, args.duration, backoff.pause
                    )
                    after = {m: model_statistics(args.url, m) for m in MODELS}
                levels[concurrency] = outcomes
                failures += outcomes.failed
                if not outcomes.accepted:
                    print(f"{Path(path).name}: concurrency {concurrency}: no request was accepted")
                    print(format_outcomes(outcomes, args.timeout), flush=True)
                    continue
                latency = summarize(outcomes.accepted, outcomes.seconds)
                p50s.setdefault(path, latency.p50_ms)
                models = [model_time(m, before[m], after[m]) for m in MODELS]
                print(format_run(Path(path).name, latency, models, concurrency), flush=True)
                print(format_outcomes(outcomes, args.timeout), flush=True)
            if len(levels) > 1:
                print(format_sweep(levels), flush=True)
    if len(p50s) > 1:
        first, reference = next(iter(p50s.items()))
        ratios = ", ".join(f"{Path(p).name} {ms / reference:.2f}" for p, ms in list(p50s.items())[1:])
        print(f"p50 latency relative to {Path(first).name}: {ratios}")
    if processes:
        print("server memory, after the warm-up to the end:")
        print(format_growth(start_memory, memory(processes)), flush=True)
    else:
        print(f"server memory: no tritonserver process listening at {args.url} is visible from this machine")
    if failures:
        raise PlatesError(f"{len(failures)} requests failed; the first: {failures[0]}")
    return 0
