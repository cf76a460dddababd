"""What fuzzy watchlist matching costs in false alerts, and what it gains in true ones, on the dev videos.

The dev videos: each of the 75 photos of ../shared/data/e2e.json as a clip of 3 frames (a parked car; the real
Watcher, tracker and vote, through the served models), and the test video of tests/integration/videos.py. The
watchlist is the 75 labelled plates. A photo's alert is true when one of its events matches its own labelled text;
a false alert is an event that matches one of the other 74 (the watchlist without its own plate, as for the many
cars on no list). Each distance is scored twice: over the event's
candidates (what plates watch does) and over its text alone. Last, how near each event comes to the watched plates
that are not its own: the margin a larger distance eats into.

    poetry run python benchmarks/watchlist_false_alerts.py [--url HOST:8000] [--distances 0 0.5 1 1.5 2]

Without --url it starts a local server. e2e.json's labels write a few zeros as the letter O, which the look-alike
cost forgives and the exact match does not.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

# The test video's writer, as docs/performance.md runs it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))

from videos import write_plate_video  # noqa: E402

from plates.build.paths import DEFAULT_REPOSITORY, shared_dir
from plates.build.repository import build_model_repository, is_built  # noqa: E402
from plates.client.retry import PATIENT  # noqa: E402
from plates.client.threads import ThreadLocalClients  # noqa: E402
from plates.photos.files import read_image  # noqa: E402
from plates.recognition.edits import plate_distance  # noqa: E402
from plates.server.launcher import LocalServer, free_port  # noqa: E402
from plates.watch.events import Event  # noqa: E402
from plates.watch.source import Frame, open_source  # noqa: E402
from plates.watch.tracking import PlateTracker  # noqa: E402
from plates.watch.watcher import Watcher  # noqa: E402
from plates.watch.watchlist import WatchedPlate, Watchlist  # noqa: E402

SHARED = shared_dir()
CLIP_FRAMES = 3


class Collect:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event, crop) -> None:
        self.events.append(event)

    def close(self) -> None:
        pass


def watch(recognize, frames, name: str) -> list[Event]:
    sink = Collect()
    Watcher(name, recognize, PlateTracker(fps=5.0), [sink]).run(frames, live=False)
    return sink.events


def clip(path: Path) -> list[Frame]:
    image = read_image(path)
    return [Frame(i, i / 5, time.time(), image) for i in range(CLIP_FRAMES)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running server (default: start a local one)")
    parser.add_argument("--distances", type=float, nargs="+", default=[0, 0.5, 1, 1.5, 2])
    args = parser.parse_args()
    labels = json.loads((SHARED / "data" / "e2e.json").read_text())
    server = None
    if not args.url:
        if not is_built(DEFAULT_REPOSITORY):
            build_model_repository(DEFAULT_REPOSITORY)
        log = Path(tempfile.mkdtemp()) / "tritonserver.log"
        server = LocalServer(http_port=free_port(), grpc_port=free_port(), metrics_port=free_port(), log_file=log)
        server.start(timeout=300)
    url = args.url or server.url
    try:
        with ThreadLocalClients(url, retry=PATIENT) as clients:
            # (event, the text of its photo's labelled plate; None for the test video, whose plate is not watched)
            scored: list[tuple[Event, str | None]] = []
            for item in labels:
                for event in watch(clients.recognize, clip(SHARED / "data" / item["image"]), item["image"]):
                    scored.append((event, item["text"]))
            with tempfile.TemporaryDirectory() as folder:
                video = write_plate_video(SHARED / "data" / "samples", Path(folder) / "plate.avi", passes=3)
                source = open_source(str(video), 5.0)
                scored += [(event, None) for event in watch(clients.recognize, source.frames(), "video")]
    finally:
        if server:
            server.stop()
    watched = [WatchedPlate(item["text"], item["image"]) for item in labels]
    print(
        f"{len(scored)} events ({len(labels)} photos of e2e.json as clips of {CLIP_FRAMES} frames, and the test "
        f"video's 3 passes), watchlist of {len(watched)} plates"
    )
    print("distance  over        true alerts  false alerts (events, of these)")
    wrong: dict[tuple, str] = {}
    for distance in args.distances:
        for over in ("candidates", "text"):
            alerted, false = set(), 0
            for event, label in scored:
                texts = [t for t in texts_of(event, over) if t]
                if Watchlist([w for w in watched if w.plate == label], distance).match(texts):
                    alerted.add(label)
                # Most cars that pass are on no list: the watchlist without the event's own plate.
                match = Watchlist([w for w in watched if w.plate != label], distance).match(texts)
                if match is not None:
                    false += 1
                    wrong.setdefault(
                        (event.source, event.track, match.plate),
                        (
                            f"{event.text} (candidate {match.text}) of {event.source} matched {match.plate} at "
                            f"{match.distance:g}"
                        ),
                    )
            print(f"{distance:8g}  {over:10}  {len(alerted):5d} of {len(labels)}  {false:5d} of {len(scored)}")
    for line in wrong.values():
        print(f"  false alert: {line}")
    # How far each event is from the watched plates that are not its own: the margin a larger distance eats into.
    nearest = [
        min(plate_distance(text, entry.plate) for text in texts_of(event, "candidates") if text)
        for event, label in scored
        if event.candidates
        for entry in watched
        if entry.plate != label
    ]
    print(
        f"{len(nearest)} (event, another photo's watched plate) pairs; within distance "
        + ", ".join(f"{d}: {sum(n <= d for n in nearest)}" for d in (1, 2, 2.5, 3, 4))
    )


def texts_of(event: Event, over: str) -> list[str | None]:
    return [t for t, _ in event.candidates] if over == "candidates" else [event.text]


if __name__ == "__main__":
    main()
