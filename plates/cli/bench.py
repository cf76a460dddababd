"""plates bench IMAGE [IMAGE ...] [--url URL] [--requests 50] [--concurrency 1] [--frame 1920x1080]: time the service.

Each photo is sent `--requests` times after a few unmeasured warm-up requests, as its file (the server decodes
it) and as its pixels; for each way, the client's latency percentiles and throughput, and each model's queue and
compute time per request from Triton's statistics; then the bytes each way puts on the wire, side by side.
`--frame WxH` also times each photo resized to that frame and stored as a JPEG, as a camera would send it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np

from plates.benchmark import (
    MODELS,
    format_run,
    format_wire,
    model_statistics,
    model_time,
    run_requests,
    summarize,
)
from plates.cli.client import add_url_option
from plates.client_threads import ThreadLocalClients
from plates.exceptions import InvalidInputError, naming
from plates.photos import decode_pixels, read_photo
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
    parser.add_argument(
        "--frame", type=frame_size, metavar="WxH", help="also time each photo resized to this frame (e.g. 1920x1080)"
    )
    parser.set_defaults(run=run_bench)
    return parser


def frame_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT, such as 1920x1080") from error
    if min(width, height) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: both sides must be at least 1")
    return width, height


def as_frame(pixels: np.ndarray, size: tuple[int, int]) -> bytes:
    """A photo resized to `size` and stored as a camera stores a frame: a JPEG of quality 90."""
    frame = cv2.resize(pixels, size, interpolation=cv2.INTER_CUBIC)
    return cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()


def run_bench(args: argparse.Namespace) -> int:
    if args.requests < 1 or args.concurrency < 1 or args.warmup < 0:
        raise InvalidInputError(
            f"--requests ({args.requests}) and --concurrency ({args.concurrency}) must be at least 1, "
            f"--warmup ({args.warmup}) at least 0"
        )
    photos = {}  # name -> the file's bytes and its pixels
    for path in args.images:
        with naming(f"photo {path}"):
            data = read_photo(path)
            pixels = decode_pixels(data, path)
        photos[Path(path).name] = data, pixels
        if args.frame:
            frame = as_frame(pixels, args.frame)
            photos[f"{Path(path).name}@{args.frame[0]}x{args.frame[1]}"] = frame, decode_pixels(frame, "frame")
    require_ready(args.url)

    def timed(label: str, image: bytes | np.ndarray) -> float:
        """Time `image` (a file or pixels), print the run, and return its p50 latency in ms."""
        with naming(f"photo {label}"):
            for _ in range(args.warmup):
                clients.recognize(image)
            before = {m: model_statistics(args.url, m) for m in MODELS}
            latencies, seconds = run_requests(lambda: clients.recognize(image), args.requests, args.concurrency)
            after = {m: model_statistics(args.url, m) for m in MODELS}
        latency = summarize(latencies, seconds)
        models = [model_time(m, before[m], after[m]) for m in MODELS]
        print(format_run(label, latency, models, args.concurrency), flush=True)
        return latency.p50_ms

    p50s = {}
    with ThreadLocalClients(args.url) as clients:
        for name, (data, pixels) in photos.items():
            p50s[name] = timed(f"{name} as file", data)
            p50_pixels = timed(f"{name} as pixels", pixels)
            sizes = clients.client().request_size(data), clients.client().request_size(pixels)
            print(format_wire(name, *sizes, p50s[name], p50_pixels), flush=True)
    if len(p50s) > 1:
        first, reference = next(iter(p50s.items()))
        ratios = ", ".join(f"{name} {ms / reference:.2f}" for name, ms in list(p50s.items())[1:])
        print(f"p50 latency as file relative to {first}: {ratios}")
    return 0
