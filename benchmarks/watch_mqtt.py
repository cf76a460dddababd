"""plates watch --mqtt against a real mosquitto: the figures of docs/watch.md.

1. Two cameras, live: two streams of the test video (tests/integration/videos.py, the car passing 3 times, then
   6 s of its last frame), each served in real time by ffmpeg over HTTP, watched by one `plates watch --config` at
   5 fps with B840CK197 on the watchlist. Prints each camera's events as printed and as the broker got them, and each
   alert's latency: from the wall time its plate's last frame was read (`last_seen_at`) to the subscriber's receipt;
   a track ends `lost_after` (1 s) after its last frame, so that second is part of it.
2. The broker away: the same site on the video files, mosquitto killed (-9) once the first event is on it and
   started again `--down` seconds later. Prints what plates watch held and delivered after, and what the broker's
   subscriber missed.
3. Discovery: the retained configs a Home Assistant starting now would find, each checked against the JSON schema of
   Home Assistant's documented options (tests/unit/data/homeassistant_mqtt_discovery.schema.json).

    poetry run python benchmarks/watch_mqtt.py [--url HOST:8000] [--down 8]

Without --url it starts a local server. mosquitto is Debian's (the README's prerequisites).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import imageio_ffmpeg
import jsonschema

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from mosquitto import Listener, Mosquitto  # noqa: E402
from videos import write_plate_video  # noqa: E402

from plates.build.paths import DEFAULT_REPOSITORY, shared_dir  # noqa: E402
from plates.build.repository import build_model_repository, is_built  # noqa: E402
from plates.server.launcher import LocalServer, free_port  # noqa: E402

SAMPLES = shared_dir() / "data" / "samples"
SCHEMAS = json.loads((ROOT / "tests" / "unit" / "data" / "homeassistant_mqtt_discovery.schema.json").read_text())
CAMERAS = ("gate", "yard")


def site_file(folder: Path, sources: list[str]) -> Path:
    cameras = "".join(f"  - {{camera_id: {c}, source: '{s}', fps: 5}}\n" for c, s in zip(CAMERAS, sources))
    path = folder / "site.yaml"
    path.write_text(f"watchlist: [B840CK197 delivery]\ncameras:\n{cameras}")
    return path


def watch(site: Path, url: str, broker: Mosquitto) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "plates.cli.main",
            "watch",
            "--config",
            str(site),
            "--url",
            url,
            "--mqtt",
            f"mqtt://127.0.0.1:{broker.port}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def unique(payloads: list[str]) -> list[dict]:
    """QoS 1 may deliver a message twice; each once, in the order first received."""
    seen = []
    for payload in payloads:
        if (message := json.loads(payload)) not in seen:
            seen.append(message)
    return seen


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def live_cameras(url: str, video: Path, folder: Path) -> None:
    print("1. two live cameras")
    broker = Mosquitto(folder / "live")
    broker.start()
    listener = Listener(broker.port)
    streams, servers = [], []
    for _ in CAMERAS:
        streams.append(f"http://127.0.0.1:{free_port()}/live.ts")
        servers.append(
            subprocess.Popen(
                # 6 s of the last frame (the cat) after the video, so that the last pass's track ends as the others do.
                [
                    imageio_ffmpeg.get_ffmpeg_exe(),
                    "-nostdin",
                    "-loglevel",
                    "quiet",
                    "-re",
                    "-i",
                    str(video),
                    "-vf",
                    "tpad=stop_mode=clone:stop_duration=6",
                    "-c:v",
                    "mpeg2video",
                    "-q:v",
                    "2",
                    "-f",
                    "mpegts",
                    "-listen",
                    "1",
                    streams[-1],
                ],
            )
        )
    process = watch(site_file(folder / "live", streams), url, broker)
    lines: list[tuple[float, str]] = []  # (when plates watch printed it, the event's line)
    reader = threading.Thread(target=lambda: lines.extend((time.time(), line) for line in process.stdout))
    reader.start()
    try:
        for server in servers:
            server.wait(120)  # the video played to its end
        time.sleep(3)  # the last tracks end
        process.send_signal(signal.SIGINT)
        process.wait(60)
        reader.join()  # the only reader of stdout (communicate() would take lines from it)
        err = process.stderr.read()
        printed = [json.loads(line) for _, line in lines]
        printed_at = {json.dumps(json.loads(line), sort_keys=True): at for at, line in lines}
        latencies, hops = [], []
        for camera in CAMERAS:
            events = unique(listener.on(f"plates/{camera}/event"))
            alerts = unique(listener.on(f"plates/{camera}/alert"))
            mine = [e for e in printed if e["camera_id"] == camera]
            print(
                f"   {camera}: {len(mine)} events printed, {len(events)} on the broker "
                f"({sum(e in events for e in mine)} of the printed), {len(alerts)} alerts"
            )
            with listener.lock:
                received = {
                    payload: at
                    for topic, payload, _, at in reversed(listener.messages)
                    if topic == f"plates/{camera}/alert"
                }
            for payload, at in received.items():
                latencies.append(at - epoch(json.loads(payload)["last_seen_at"]))
                hops.append(at - printed_at[json.dumps(json.loads(payload), sort_keys=True)])
                print(f"      alert of track {json.loads(payload)['track']}: {latencies[-1]:.2f} s")
        if latencies:
            print(
                f"   alert latency, last frame of the plate read -> broker's subscriber: median "
                f"{statistics.median(latencies):.2f} s, min {min(latencies):.2f} s, max {max(latencies):.2f} s "
                f"over {len(latencies)} alerts (the track's end included)"
            )
            print(
                f"   of which the event printed -> broker's subscriber: median "
                f"{1000 * statistics.median(hops):.1f} ms, max {1000 * max(hops):.1f} ms"
            )
        print("   " + "\n   ".join(err.strip().splitlines()[-3:]))
        discovery(broker)
    finally:
        for child in (process, *servers):
            if child.poll() is None:
                child.kill()
        listener.close()
        broker.kill()


def discovery(broker: Mosquitto) -> None:
    print("3. discovery configs retained on the broker")
    late = Listener(broker.port)
    deadline = time.monotonic() + 10
    while len(late.messages) < 1 + 2 * len(CAMERAS) and time.monotonic() < deadline:
        time.sleep(0.05)
    for topic, payload, retained, _ in late.messages:
        if not topic.startswith("homeassistant/"):
            print(f"   {topic} = {payload!r} (retained: {retained})")
            continue
        component = topic.split("/")[1]
        schema = {
            "$defs": SCHEMAS["$defs"],
            "type": "object",
            "required": SCHEMAS[component]["required"],
            "properties": {**SCHEMAS["$defs"]["common"], **SCHEMAS[component]["properties"]},
            "additionalProperties": False,
        }
        errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(json.loads(payload))]
        print(f"   {topic} (retained: {retained}): {'valid' if not errors else errors}\n      {payload}")
    late.close()


def broker_away(url: str, video: Path, folder: Path, down: float) -> None:
    print(f"2. the broker killed once the first event is on it, started again {down:g} s later")
    broker = Mosquitto(folder / "away")
    broker.start()
    listener = Listener(broker.port, persistent=True)
    process = watch(site_file(folder / "away", [str(video), str(video)]), url, broker)
    try:
        deadline = time.monotonic() + 120
        while not any(listener.on(f"plates/{c}/event") for c in CAMERAS) and time.monotonic() < deadline:
            time.sleep(0.01)
        broker.kill()
        killed = time.monotonic()
        time.sleep(down)
        broker.start()
        print(f"   broker away {time.monotonic() - killed:.1f} s")
        out, err = process.communicate(timeout=120)
        printed = [json.loads(line) for line in out.splitlines()]
        time.sleep(2)
        on_broker = [e for c in CAMERAS for e in unique(listener.on(f"plates/{c}/event"))]
        missing = [e for e in printed if e not in on_broker]
        print(f"   {len(printed)} events printed, {len(on_broker)} on the broker, {len(missing)} missing")
        print("   " + err.strip().splitlines()[-1])
    finally:
        if process.poll() is None:
            process.kill()
        listener.close()
        broker.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running server (default: start a local one)")
    parser.add_argument("--down", type=float, default=8.0, help="seconds the broker stays away (default 8)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="watch_mqtt."))
    for name in ("live", "away"):
        (folder / name).mkdir()
    video = write_plate_video(SAMPLES, folder / "passes.avi", passes=3)
    server = None
    if not args.url:
        if not is_built(DEFAULT_REPOSITORY):
            build_model_repository(DEFAULT_REPOSITORY)
        server = LocalServer(
            http_port=free_port(), grpc_port=free_port(), metrics_port=free_port(), log_file=folder / "tritonserver.log"
        )
        server.start(timeout=300)
    try:
        live_cameras(args.url or server.url, video, folder)
        broker_away(args.url or server.url, video, folder, args.down)
    finally:
        if server:
            server.stop()


if __name__ == "__main__":
    main()
