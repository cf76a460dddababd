"""plates watch SOURCE [--fps 5] [--csv FILE] [--webhook URL] [--save-crops DIR]: one event per plate that passes.

SOURCE is a video file, a folder of frames, a stream URL (rtsp://, http://, udp://, ...) or a camera index.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from plates.cli.client import add_url_option
from plates.client_threads import ThreadLocalClients
from plates.retry import PATIENT, RetryPolicy
from plates.exceptions import InvalidInputError
from plates.readiness import require_ready
from plates.watch.sinks import CropSink, CsvSink, JsonLinesSink, WebhookSink
from plates.watch.source import open_source
from plates.watch.tracking import TRACKERS, PlateTracker
from plates.watch.watcher import Watcher


def add_watch_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "watch",
        help="read the plates of a camera, stream, video or folder of frames: one event per plate",
        description=(
            "Send frames of SOURCE (a video file, a folder of frames, a stream URL such as rtsp://, http:// or "
            "udp://, or a camera index) to the service, follow each plate across frames, and write one event per "
            "plate when its track ends: JSON lines on stdout, and optionally CSV, a webhook and crops."
        ),
    )
    parser.add_argument("source", metavar="SOURCE")
    add_url_option(parser)
    parser.add_argument("--fps", type=float, default=5.0, help="frames per second sent to the service (default 5)")
    parser.add_argument(
        "--max-in-flight", type=int, default=2, help="requests out at once; a live frame beyond is skipped (default 2)"
    )
    parser.add_argument(
        "--lost-after", type=float, default=1.0, help="seconds unseen after which a track ends (default 1)"
    )
    parser.add_argument(
        "--max-delay", type=float, help="on a live source, report a plate this many seconds after it was first seen "
        "if its track has not ended by then (default: when it ends)",
    )  # fmt: skip
    parser.add_argument("--tracker", choices=TRACKERS, default="bytetrack", help="default bytetrack")
    parser.add_argument("--csv", type=Path, metavar="FILE", help="also write the events to this CSV file")
    parser.add_argument("--webhook", metavar="URL", help="also POST each event as JSON to this URL")
    parser.add_argument("--save-crops", type=Path, metavar="DIR", help="save the best crop of each plate here")
    parser.set_defaults(run=run_watch)
    return parser


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_watch(args: argparse.Namespace) -> int:
    if args.max_in_flight < 1 or args.lost_after <= 0 or (args.max_delay is not None and args.max_delay <= 0):
        raise InvalidInputError(
            f"--max-in-flight ({args.max_in_flight}) must be at least 1, --lost-after ({args.lost_after}) and "
            f"--max-delay ({args.max_delay}) above 0"
        )
    logging.basicConfig(format="warning: %(message)s", stream=sys.stderr)
    require_ready(args.url)
    source = open_source(args.source, args.fps)
    sinks = [JsonLinesSink(sys.stdout)]
    try:
        if args.csv:
            sinks.append(CsvSink(args.csv))
        if args.save_crops:
            sinks.append(CropSink(args.save_crops))
        if args.webhook:
            sinks.append(WebhookSink(args.webhook))
        tracker = PlateTracker(args.tracker, args.fps, args.lost_after)
        # SIGTERM (systemd, docker stop) ends the open tracks as events, as Ctrl-C does.
        signal.signal(signal.SIGTERM, _interrupt)
        # A file is read whole: a refused frame waits for its turn (within the client's timeout). A live frame gets
        # the client's usual few quick retries, then is skipped.
        retry = RetryPolicy() if source.live else PATIENT
        with ThreadLocalClients(args.url, retry=retry) as clients:
            watcher = Watcher(
                args.source, clients.recognize, tracker, sinks, args.max_in_flight, args.max_delay,
                keep_crops=args.save_crops is not None,
            )  # fmt: skip
            summary = watcher.run(source.frames(), source.live, source.total, progress=sys.stdout.isatty())
    finally:
        source.close()
    print(summary.line(args.source, args.tracker), file=sys.stderr)
    return 0
