"""plates bench IMAGE [IMAGE ...] [--url localhost:8000] [--requests 50] [--concurrency 1]: time the service.

Each photo is sent `--requests` times after a few unmeasured warm-up requests; for each, the client's latency
percentiles and throughput, and each model's queue and compute time per request from Triton's statistics.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from plates.benchmark import MODELS, format_run, model_statistics, model_time, run_requests, summarize
from plates.cli.client import add_url_option
from plates.client import PlatesClient
from plates.exceptions import InvalidInputError, naming
from plates.photos import read_image
from plates.readiness import require_ready


def add_bench_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "bench",
        help="latency, throughput and per-model time of the served pipeline on photos",
        description=__doc__.split("\n", 2)[2].strip(),
    )
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photo files, each timed on its own")
    add_url_option(parser)
    parser.add_argument("--requests", type=int, default=50, help="measured requests per photo (default 50)")
    parser.add_argument("--concurrency", type=int, default=1, help="requests in flight at once (default 1)")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured requests per photo first (default 3)")
    parser.set_defaults(run=run_bench)
    return parser


def run_bench(args: argparse.Namespace) -> int:
    if args.requests < 1 or args.concurrency < 1 or args.warmup < 0:
        raise InvalidInputError(
            f"--requests ({args.requests}) and --concurrency ({args.concurrency}) must be at least 1, "
            f"--warmup ({args.warmup}) at least 0"
        )
    images = {}
    for path in args.images:
        with naming(f"photo {path}"):
            images[path] = read_image(path)
    require_ready(args.url)

    # One connection per thread: a tritonclient HTTP client is not meant to be shared between threads.
    local = threading.local()
    clients: list[PlatesClient] = []

    def client() -> PlatesClient:
        if not hasattr(local, "client"):
            local.client = PlatesClient(args.url)
            clients.append(local.client)
        return local.client

    p50s = {}
    try:
        for path, image in images.items():
            with naming(f"photo {path}"):
                for _ in range(args.warmup):
                    client().recognize(image)
                before = {m: model_statistics(args.url, m) for m in MODELS}
                latencies, seconds = run_requests(lambda: client().recognize(image), args.requests, args.concurrency)
                after = {m: model_statistics(args.url, m) for m in MODELS}
            latency = summarize(latencies, seconds)
            p50s[path] = latency.p50_ms
            models = [model_time(m, before[m], after[m]) for m in MODELS]
            print(format_run(Path(path).name, latency, models, args.concurrency), flush=True)
    finally:
        for c in clients:
            c.close()
    if len(p50s) > 1:
        first, reference = next(iter(p50s.items()))
        ratios = ", ".join(f"{Path(p).name} {ms / reference:.2f}" for p, ms in list(p50s.items())[1:])
        print(f"p50 latency relative to {Path(first).name}: {ratios}")
    return 0
