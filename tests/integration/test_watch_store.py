"""plates watch with a store, against the real server: recordings given their wall-clock start make visits as live
cameras would, on SQLite and on a real PostgreSQL, and an overstay reaches a real mosquitto."""

from __future__ import annotations

import json

import pytest
from readings import CAR_PLATE

from plates.cli.main import main
from plates.store import search
from plates.store.database import Store

from .mosquitto import Listener, Mosquitto
from .test_store import T0
from .videos import write_plate_video


@pytest.fixture(scope="module")
def plate_video(samples, tmp_path_factory):
    return write_plate_video(samples, tmp_path_factory.mktemp("watch_store") / "plate.avi")


def watch(site: str, triton_url: str, tmp_path, name: str) -> None:
    config = tmp_path / f"{name}.yaml"
    config.write_text(site)
    assert main(["watch", "--config", str(config), "--url", triton_url]) == 0


def site(store: str, camera: str, role: str, start: str, video, extra: str = "") -> str:
    return (
        f"store: {json.dumps(store)}\nstore_crops: crops\n{extra}cameras:\n"
        f"  - {{camera_id: {camera}, source: {json.dumps(str(video))}, role: {role}, start: '{start}'}}\n"
    )


def test_recordings_of_an_entrance_and_an_exit_make_one_visit_with_its_dwell(
    store_url, triton_url, plate_video, tmp_path, capsys
):
    watch(site(store_url, "gate-in", "entrance", "2026-11-28T08:00:00Z", plate_video), triton_url, tmp_path, "in")
    watch(site(store_url, "gate-out", "exit", "2026-11-28T09:30:00Z", plate_video), triton_url, tmp_path, "out")
    store = Store(store_url)
    with store.session() as session:
        visits = search.visits(session, T0)
        reads = search.search_reads(session, search.ReadQuery(plate=CAR_PLATE))["reads"]
    store.close()
    assert [(v["plate"], v["state"]) for v in visits] == [(CAR_PLATE, "left")], visits
    # The car is in the video from its 1st second: the visit's times are the reads', each 1 s after its file's start.
    assert visits[0]["entered_at"].startswith("2026-11-28T08:00:01") and visits[0]["dwell_minutes"] == 90.0
    assert [(r["camera_id"], r["direction"]) for r in reads] == [("gate-out", "out"), ("gate-in", "in")]
    assert all((tmp_path / "crops" / r["crop"]).stat().st_size > 0 for r in reads)


def test_a_car_inside_too_long_is_alerted_on_mqtt_once(triton_url, plate_video, tmp_path, capsys):
    broker = Mosquitto(tmp_path)
    broker.start()
    listener = Listener(broker.port)
    try:
        store, mqtt = str(tmp_path / "site.db"), f"mqtt: mqtt://127.0.0.1:{broker.port}\noverstay_after: 60\n"
        watch(site(store, "gate", "entrance", "2026-11-28T08:00:00Z", plate_video, mqtt), triton_url, tmp_path, "a")
        # A camera of the yard sees the car 90 minutes on: the site's clock passes the hour, and the alert goes out
        # through this process's broker connection, on the entrance camera's topic.
        watch(site(store, "yard", "none", "2026-11-28T09:30:00Z", plate_video, mqtt), triton_url, tmp_path, "b")
        watch(site(store, "yard", "none", "2026-11-28T09:40:00Z", plate_video, mqtt), triton_url, tmp_path, "c")
        alerts = [json.loads(m) for m in listener.wait_for("plates/gate/overstay", 1, timeout=10)]
    finally:
        listener.close()
        broker.kill()
    assert len(alerts) == 1, alerts
    assert alerts[0]["plate"] == CAR_PLATE and alerts[0]["kind"] == "overstay"
    assert alerts[0]["inside_minutes"] == 90.0 and alerts[0]["entered_at"].startswith("2026-11-28T08:00:01")
