"""plates bench IMAGE [IMAGE ...] [--url URL] [--requests 50 | --duration S] [--concurrency 1 [2 ...]]
[--frame 1920x1080]: time the service, and how it holds up under load.

Each photo is sent `--requests` times (or for `--duration` seconds) at each `--concurrency` level, after a few
unmeasured warm-up requests, as its file (the server decodes it) and as its pixels; for each, the client's latency
percentiles and throughput, how many requests the server accepted and refused (a refusal is counted, never
retried), and each model's queue and compute time per request from Triton's statistics; then the bytes each way
puts on the wire, side by side. With several levels, the sustainable concurrency and how latency holds above it.
`--frame WxH` also times each photo resized to that frame and stored as a JPEG, as a camera would send it. Where the
server runs on this machine, its processes' memory at the start and end (a soak: --duration). `--in-process` also
runs each photo's file through the same pipeline in this process (the local model repository's models, configs and
code), alternating with served requests, and prints both p50s side by side, with where the time goes by stage;
and, in the same turns, the photo's pixels served through the pipeline and through the detector model alone.
`--gateway URL` also sends each photo's file through `plates gateway` at URL, to each of its APIs (`--gateway-api`:
Plate Recognizer's snapshot and CodeProject.AI's codeproject, both by default), in turns with Triton direct at each
level (direct, each API, direct, each API: all meet the same machine load), and prints each API beside Triton
direct: what the gateway adds to the p50 and what it costs in throughput. `--cold` times the first photo's file once
before anything else is sent and prints it beside that photo's steady p50: run it on a server that has just said
ready (`plates serve` prints "Triton is ready"), which has answered nothing but its own warm-up and health checks.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from pathlib import Path

import cv2
import numpy as np

from plates.build.paths import DEFAULT_REPOSITORY
from plates.cli.client import add_url_option
from plates.client.gateway import PATHS as GATEWAY_PATHS
from plates.client.gateway import GatewayClient
from plates.client.readiness import require_ready
from plates.client.retry import NO_RETRY, RetryPolicy
from plates.client.service import PlatesClient
from plates.client.threads import PerThread, ThreadLocalClients
from plates.evaluation.timing import (
    MODELS,
    format_first,
    format_gateway,
    format_outcomes,
    format_run,
    format_side_by_side,
    format_sweep,
    format_wire,
    merge,
    model_statistics,
    model_time,
    run_requests,
    side_by_side,
    summarize,
)
from plates.exceptions import InvalidInputError, PlatesError, naming
from plates.photos.decoding import decode_pixels
from plates.photos.files import read_photo
from plates.server.process_memory import format_growth, memory, server_processes


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
        "--concurrency",
        type=int,
        nargs="+",
        default=[1],
        metavar="N",
        help="requests in flight at once; several levels run one after the other (default 1)",
    )
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured requests per photo first (default 3)")
    parser.add_argument(
        "--frame", type=frame_size, metavar="WxH", help="also time each photo resized to this frame (e.g. 1920x1080)"
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="the client's timeout in seconds (default 60)")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="also time each photo's file in one process, alternating with the "
        "server, and print both side by side (--requests each, concurrency 1)",
    )
    parser.add_argument(
        "--repository",
        type=Path,
        default=DEFAULT_REPOSITORY,
        help="the model repository --in-process runs (default: the project's, as plates serve builds it)",
    )
    parser.add_argument(
        "--gateway",
        metavar="URL",
        help="also time each photo's file through plates gateway at URL (such as "
        "localhost:8080), in turns with Triton direct, and print both side by side",
    )
    parser.add_argument(
        "--gateway-api",
        nargs="+",
        choices=sorted(GATEWAY_PATHS),
        default=["snapshot", "codeproject"],
        help="the gateway's APIs --gateway times, each in turns with Triton direct (default: both: Plate Recognizer's "
        "snapshot, CodeProject.AI's codeproject)",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="time the first request before the warm-up, and print it beside the "
        "steady p50: for a server that has just said ready",
    )
    parser.add_argument(
        "--gateway-key",
        default=os.environ.get("PLATES_GATEWAY_KEY"),
        help="the token --gateway sends "
        "(default: $PLATES_GATEWAY_KEY; none for a gateway on the loopback with no keys)",
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
    if args.requests < 1 or min(args.concurrency) < 1 or args.warmup < 0 or args.timeout <= 0:
        raise InvalidInputError(
            f"--requests ({args.requests}) and --concurrency ({' '.join(map(str, args.concurrency))}) must be at "
            f"least 1, --warmup ({args.warmup}) at least 0, --timeout ({args.timeout}) above 0"
        )
    if args.duration is not None and args.duration <= 0:
        raise InvalidInputError(f"--duration ({args.duration}) must be above 0 seconds")
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

    failures = []
    # A refused thread waits as PlatesClient would before a retry. Without it, on the 2-core machine, 15 threads
    # resending at once had the server spend its CPU on refusing (1 MB photos): 0.7 accepted req/s instead of 4.7.
    backoff = RetryPolicy()

    def timed(label: str, image: bytes | np.ndarray) -> float | None:
        """Send `image` (a file or pixels) at every level, print each run; the p50 at the first level, in ms."""
        levels, p50 = {}, None
        for concurrency in args.concurrency:
            with naming(f"photo {label}"):
                before = {m: model_statistics(args.url, m) for m in MODELS}
                requests = None if args.duration is not None else args.requests
                outcomes = run_requests(
                    lambda: clients.recognize(image), requests, concurrency, args.duration, backoff.pause
                )
                after = {m: model_statistics(args.url, m) for m in MODELS}
            levels[concurrency] = outcomes
            failures.extend(outcomes.failed)
            if not outcomes.accepted:
                print(f"{label}: concurrency {concurrency}: no request was accepted")
                print(format_outcomes(outcomes, args.timeout), flush=True)
                continue
            latency = summarize(outcomes.accepted, outcomes.seconds)
            p50 = latency.p50_ms if p50 is None else p50
            models = [model_time(m, before[m], after[m]) for m in MODELS]
            print(format_run(label, latency, models, concurrency), flush=True)
            print(format_outcomes(outcomes, args.timeout), flush=True)
        if len(levels) > 1:
            print(format_sweep(levels), flush=True)
        return p50

    p50s = {}
    with ThreadLocalClients(args.url, timeout=args.timeout, retry=NO_RETRY) as clients:
        if args.cold:
            first_name, (first_data, _) = next(iter(photos.items()))
            # The client's own first costs (importing tritonclient, opening its connection) are not the server's.
            clients.client().ready()
            with naming(f"photo {first_name}"):
                sent = time.perf_counter()
                clients.recognize(first_data)
                first_ms = (time.perf_counter() - sent) * 1000
        for name, (data, _) in photos.items():
            with naming(f"photo {name}"):
                for _ in range(args.warmup):
                    clients.recognize(data)
        processes = server_processes(args.url)
        start_memory = memory(processes)
        for name, (data, pixels) in photos.items():
            p50s[name] = timed(f"{name} as file", data)
            p50_pixels = timed(f"{name} as pixels", pixels)
            if p50s[name] is not None and p50_pixels is not None:
                sizes = clients.client().request_size(data), clients.client().request_size(pixels)
                print(format_wire(name, *sizes, p50s[name], p50_pixels), flush=True)
    if args.cold and p50s[first_name] is not None:
        print(format_first(f"{first_name} as file", first_ms, p50s[first_name]), flush=True)
    timed_p50s = {name: ms for name, ms in p50s.items() if ms is not None}
    if len(timed_p50s) > 1:
        first, reference = next(iter(timed_p50s.items()))
        ratios = ", ".join(f"{name} {ms / reference:.2f}" for name, ms in list(timed_p50s.items())[1:])
        print(f"p50 latency as file relative to {first}: {ratios}")
    if args.in_process:
        compare_in_process(args, photos)
    if args.gateway:
        failures.extend(compare_gateway(args, {name: data for name, (data, _) in photos.items()}))
    if processes:
        print("server memory, after the warm-up to the end:")
        print(format_growth(start_memory, memory(processes)), flush=True)
    else:
        print(f"server memory: no tritonserver process listening at {args.url} is visible from this machine")
    if failures:
        raise PlatesError(f"{len(failures)} requests failed; the first: {failures[0]}")
    return 0


def compare_gateway(args: argparse.Namespace, files: dict[str, bytes]) -> list[PlatesError]:
    """Each photo's file through Triton direct and through the gateway, in turns at each level; the failures."""
    failures: list[PlatesError] = []
    requests = None if args.duration is not None else max(1, args.requests // 2)
    duration = None if args.duration is None else args.duration / 2
    with contextlib.ExitStack() as stack:
        direct = stack.enter_context(ThreadLocalClients(args.url, timeout=args.timeout, retry=NO_RETRY))
        paths = {"direct": lambda data: direct.recognize(data)}
        for api in args.gateway_api:
            clients = stack.enter_context(
                PerThread(lambda api=api: GatewayClient(args.gateway, args.gateway_key, args.timeout, api))
            )
            paths[api] = lambda data, clients=clients: clients.client().read(data)
        for name, data in files.items():
            with naming(f"photo {name} through the gateway"):
                for _ in range(args.warmup):
                    for api in args.gateway_api:
                        paths[api](data)
            for concurrency in args.concurrency:
                runs: dict[str, list] = {path: [] for path in paths}
                for _ in range(2):
                    for path, send in paths.items():
                        with naming(f"photo {name} {path}"):
                            runs[path].append(
                                run_requests(lambda: send(data), requests, concurrency, duration, RetryPolicy().pause)
                            )
                outcomes = {path: merge(done) for path, done in runs.items()}
                for done in outcomes.values():
                    failures.extend(done.failed)
                for api in args.gateway_api:
                    print(format_gateway(name, concurrency, outcomes["direct"], outcomes[api], api), flush=True)
    return failures


def compare_in_process(args: argparse.Namespace, photos: dict[str, tuple[bytes, np.ndarray]]) -> None:
    """Each photo's file served and in this process, alternately, side by side."""
    from plates.inference.in_process import InProcessPipeline  # loads torch and the models: only when asked
    from plates.inference.pipeline import DETECTOR_OUTPUTS

    pipeline = InProcessPipeline(args.repository)
    # Refusals are retried: the health checks of `plates serve` can take a queue's one free place for a moment (yolo
    # lets one request wait), and a retried request's pause is an outlier that the p50s compared here do not see.
    with PlatesClient(args.url, timeout=args.timeout) as client:
        for name, (data, pixels) in photos.items():

            def detector_alone() -> None:
                client.infer("yolo", client.inputs(pixels), DETECTOR_OUTPUTS)

            with naming(f"photo {name}"):
                for _ in range(args.warmup):
                    pipeline.recognize(data)
                    detector_alone()
                result = side_by_side(
                    lambda: client.recognize(data),
                    lambda: pipeline.recognize(data)[1],
                    args.requests,
                    detector=(lambda: client.recognize(pixels), detector_alone),
                )
            print(format_side_by_side(name, result), flush=True)
