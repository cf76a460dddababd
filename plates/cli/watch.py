"""plates watch SOURCE | --config site.yaml: one event per plate that passes, on stdout and optionally CSV, a webhook,
crops and MQTT; watched plates as alerts.

SOURCE is a video file, a folder of frames, a stream URL (rtsp://, http://, udp://, ...) or a camera index; a site
file names several cameras (docs/watch.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import signal
import sys
from datetime import timedelta
from pathlib import Path

from plates.cli.client import add_url_option
from plates.client.readiness import require_ready
from plates.client.retry import PATIENT, RetryPolicy
from plates.client.threads import ThreadLocalClients
from plates.comms.dispatcher import Dispatcher
from plates.comms.mqtt import PASSWORD_VARIABLE, Broker, MqttTransport
from plates.exceptions import SettingsError
from plates.store.sightings import ROLES
from plates.watch.runner import Site
from plates.watch.sinks import JsonLinesSink, Sink, StoreSink
from plates.watch.site import DEFAULT_CAMERA_ID, DEFAULT_DISCOVERY_PREFIX, CameraSettings, SiteSettings, load_site
from plates.watch.source import is_live, without_password
from plates.watch.tracking import TRACKERS
from plates.watch.watchlist import Watchlist, WatchlistFile

# The options of one camera: flags for SOURCE, keys of each camera in a site file.
CAMERA_FLAGS = (
    "camera_id",
    "fps",
    "max_in_flight",
    "lost_after",
    "max_delay",
    "tracker",
    "csv",
    "webhook",
    "save_crops",
    "role",
    "start",
)


def add_watch_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "watch",
        help="read the plates of cameras, streams, videos or folders of frames: one event per plate",
        description=(
            "Send frames of SOURCE (a video file, a folder of frames, a stream URL such as rtsp://, http:// or "
            "udp://, or a camera index), or of every camera of a site file (--config), to the service, follow each "
            "plate across frames, and write one event per plate when its track ends: JSON lines on stdout, and "
            "optionally CSV, a webhook, crops and MQTT. docs/watch.md is the manual."
        ),
    )
    parser.add_argument("source", metavar="SOURCE", nargs="?")
    parser.add_argument("--config", type=Path, metavar="FILE", help="a site file (YAML) naming several cameras")
    add_url_option(parser)
    camera = parser.add_argument_group("one camera (SOURCE; in a site file, each camera's keys)")
    camera.add_argument(
        "--camera-id", help=f"the camera's name in events and MQTT topics (default {DEFAULT_CAMERA_ID})"
    )
    camera.add_argument("--fps", type=float, help="frames per second sent to the service (default 5)")
    camera.add_argument(
        "--max-in-flight", type=int, help="requests out at once; a live frame beyond is skipped (default 2)"
    )
    camera.add_argument("--lost-after", type=float, help="seconds unseen after which a track ends (default 1)")
    camera.add_argument(
        "--max-delay",
        type=float,
        help="on a live source, report a plate this many seconds after it was first seen "
        "if its track has not ended by then (default: when it ends)",
    )
    camera.add_argument("--tracker", choices=TRACKERS, help="default bytetrack")
    camera.add_argument("--csv", type=Path, metavar="FILE", help="also write the events to this CSV file")
    camera.add_argument("--webhook", metavar="URL", help="also POST each event as JSON to this URL")
    camera.add_argument("--save-crops", type=Path, metavar="DIR", help="save the best crop of each plate here")
    camera.add_argument(
        "--role", choices=ROLES, help="for the store's visits: entrance, exit, both (the track's motion) or none"
    )
    camera.add_argument(
        "--start", metavar="TIME", help="a video file's wall-clock start (ISO 8601), so that its events have real times"
    )
    site = parser.add_argument_group("the site (these override the site file's)")
    site.add_argument(
        "--watchlist",
        type=Path,
        metavar="FILE",
        help="watched plates, a line each: `A505PO198 delivery`; read again when it changes",
    )
    site.add_argument(
        "--max-distance",
        type=float,
        help="match watched plates within this edit distance of any candidate of the "
        "plate, a look-alike character (0/O, 8/B) counting 0.5 (default 0: exact)",
    )
    site.add_argument(
        "--mqtt",
        metavar="URL",
        help=f"publish events to this broker: mqtt://[user@]host[:1883] or mqtts:// (TLS); "
        f"the password in ${PASSWORD_VARIABLE}",
    )
    site.add_argument(
        "--discovery-prefix", help=f"Home Assistant's MQTT discovery prefix (default {DEFAULT_DISCOVERY_PREFIX})"
    )
    site.add_argument(
        "--store",
        metavar="URL",
        help="keep every event in this store: a SQLite file or a postgresql:// URL (plates store searches it)",
    )
    site.add_argument(
        "--max-in-flight-total", type=int, help="requests out at once across every camera of a site file (default 4)"
    )
    parser.set_defaults(run=run_watch)
    return parser


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def site_settings(args: argparse.Namespace) -> SiteSettings:
    """The site of `--config`, or of SOURCE and the camera flags; the site flags over either."""
    given = {name: getattr(args, name) for name in CAMERA_FLAGS if getattr(args, name) is not None}
    if args.config and args.source:
        raise SettingsError("give SOURCE or --config FILE, not both")
    if args.config:
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise SettingsError(f"{flags}: with --config, set these per camera in {args.config}")
        site = load_site(args.config)
    elif args.source:
        camera = CameraSettings(**{"camera_id": DEFAULT_CAMERA_ID, **given, "source": args.source})
        site = SiteSettings([camera], max_in_flight_total=camera.max_in_flight)
    else:
        raise SettingsError("give SOURCE (a video, folder, stream URL or camera index) or --config FILE")
    overrides = {
        "watchlist_file": args.watchlist,
        "max_distance": args.max_distance,
        "mqtt": args.mqtt,
        "discovery_prefix": args.discovery_prefix,
        "max_in_flight_total": args.max_in_flight_total,
        "store": args.store,
    }
    overrides = {name: value for name, value in overrides.items() if value is not None}
    if args.watchlist is not None:
        overrides["watchlist"] = []  # --watchlist replaces the site file's list
    site = dataclasses.replace(site, **overrides)
    site.check(str(args.config) if args.config else "plates watch")
    return site


def open_store(site: SiteSettings) -> StoreSink:
    """The site's store, opened and migrated before any camera starts, so that a wrong URL stops the command."""
    # SQLAlchemy and Alembic load here, where a store is given.
    from plates.store.database import Store
    from plates.store.records import Retention, VisitRules
    from plates.store.writer import StoreWriter

    rules = VisitRules(
        visit_distance=site.visit_distance,
        absent_after=timedelta(minutes=site.absent_after),
        overstay_after=timedelta(minutes=site.overstay_after) if site.overstay_after else None,
    )
    live = any(is_live(camera.source) for camera in site.cameras)
    retention = Retention(timedelta(days=site.keep_reads_days), timedelta(days=site.keep_visits_days))
    writer = StoreWriter(Store(site.store), rules, site.store_crops, retention, live=live)
    roles = {camera.camera_id: (camera.role, camera.entry_motion) for camera in site.cameras}
    return StoreSink(writer, roles)


def run_watch(args: argparse.Namespace) -> int:
    site = site_settings(args)
    logging.basicConfig(format="warning: %(message)s", stream=sys.stderr)
    watchlist = None
    if site.watchlist_file:
        watchlist = WatchlistFile(site.watchlist_file, site.max_distance)
    elif site.watchlist:
        watchlist = Watchlist(site.watchlist, site.max_distance)
    broker = Broker.parse(site.mqtt) if site.mqtt else None
    require_ready(args.url)
    camera_ids = [camera.camera_id for camera in site.cameras]
    store = open_store(site) if site.store else None
    dispatcher = Dispatcher([MqttTransport(broker, camera_ids, site.discovery_prefix)] if broker else [])
    shared: list[Sink] = [JsonLinesSink(sys.stdout), dispatcher] + ([store] if store else [])
    # SIGTERM (systemd, docker stop) ends the open tracks as events, as Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    # A file is read whole: a refused frame waits for its turn (within the client's timeout). A live frame gets
    # the client's usual few quick retries, then is skipped.
    live, whole = ThreadLocalClients(args.url, retry=RetryPolicy()), ThreadLocalClients(args.url, retry=PATIENT)
    with live, whole:
        runner = Site(
            site,
            lambda is_live: live.recognize if is_live else whole.recognize,
            shared,
            watchlist,
            progress=len(site.cameras) == 1 and sys.stdout.isatty(),
        )
        if store is not None:
            store.writer.on_overstay = lambda visit, now: runner.notify(
                visit.camera_id, {"kind": "overstay", **visit.to_dict(now)}
            )
        try:
            runs = runner.run()
        finally:
            if store is not None:
                store.close()  # before the dispatcher: its last overstays go out through MQTT
            dispatcher.close()
    for run in runs:
        if run.summary is not None:
            source = without_password(run.settings.source)
            name = source if len(runs) == 1 else f"{run.settings.camera_id} ({source})"
            print(run.summary.line(name, run.settings.tracker), file=sys.stderr)
    for line in dispatcher.summaries():
        print(line, file=sys.stderr)
    errors = [run.error for run in runs if run.error is not None]
    if errors:
        raise errors[0]
    return 0
