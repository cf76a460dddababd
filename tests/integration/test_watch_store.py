"""plates watch with a store, against the real server: recordings given their wall-clock start make visits as live
cameras would, on SQLite and on a real PostgreSQL, and an overstay reaches a real mosquitto. A live camera's events
all reach a PostgreSQL stopped for 30 s under it, and a store that cannot be written is one error line while the
events still reach their other sinks."""

from __future__ import annotations

import csv
import json
import logging
import os
import signal
import subprocess
import sys
import time

import pytest
from readings import CAR_PLATE

from plates.cli.main import main
from plates.store import database, search
from plates.store.database import Store

from .mosquitto import Listener, Mosquitto
from .postgres import Postgres
from .test_store import T0, _wait
from .videos import serve_live, write_plate_video


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


def _rows(path) -> list[dict]:
    return list(csv.DictReader(open(path))) if path.exists() else []


def _stored_tracks(url: str) -> list[int]:
    store = Store(url, migrate=False)
    try:
        with store.session() as session:
            return sorted(r["track"] for r in search.search_reads(session, search.ReadQuery(limit=1000))["reads"])
    finally:
        store.close()


def test_every_event_of_a_live_camera_reaches_postgresql_stopped_for_30_s(
    triton_url, plate_video, tmp_path, ctrl_c_raises
):
    server = Postgres()
    ffmpeg = watch = None
    try:
        server.start()
        url = server.new_database()
        Store(url).close()
        stream, ffmpeg = serve_live(plate_video)  # the car passes every 5 s
        events = tmp_path / "events.csv"
        # faulthandler: a watch that does not stop is aborted and says where each of its threads waited.
        command = [sys.executable, "-X", "faulthandler", "-m", "plates.cli.main", "watch", stream, "--url", triton_url]
        command += ["--fps", "2"]
        command += ["--camera-id", "gate", "--store", url, "--csv", str(events)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        watch = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        _wait(lambda: watch.poll() is not None or _stored_tracks(url), within=60, what=lambda: _rows(events))
        assert watch.poll() is None, watch.stderr.read()
        server.stop()
        before = len(_rows(events))
        time.sleep(30)
        during = len(_rows(events)) - before
        server.start()
        _wait(lambda: len(_rows(events)) >= before + during + 2, within=40, what=lambda: _rows(events))
        watch.send_signal(signal.SIGINT)
        try:
            _, err = watch.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            watch.send_signal(signal.SIGABRT)
            pytest.fail("plates watch did not stop within 60 s of Ctrl-C:\n" + watch.communicate(timeout=30)[1])
        assert watch.returncode == 0, err
        stored = _stored_tracks(url)
    finally:
        for process in (watch, ffmpeg):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        server.remove()
    assert during >= 4, f"{during} events while the database was stopped"
    assert stored == sorted(int(row["track"]) for row in _rows(events)), err
    assert err.count("cannot write, holding reads") == 1 and err.count("writing again") == 1, err


def test_a_store_that_cannot_be_written_is_one_error_line_and_the_events_reach_the_csv(
    triton_url, plate_video, tmp_path, caplog, monkeypatch
):
    path = tmp_path / "site.db"
    Store(str(path)).close()
    # SQLite's query_only stands for a read-only disk (SQLITE_READONLY on every write), which file permissions cannot
    # make for root, as CI runs. Opened as the watch opens it, after the schema was made.
    settings = database._sqlite_settings

    def read_only(connection, record) -> None:
        settings(connection, record)
        connection.execute("PRAGMA query_only = ON")

    monkeypatch.setattr(database, "_sqlite_settings", read_only)
    events = tmp_path / "events.csv"
    # The writer holds the read, retrying, until its drain timeout at exit (30 s), then says it was not written.
    assert main(["watch", str(plate_video), "--url", triton_url, "--store", str(path), "--csv", str(events)]) == 0
    assert [row["text"] for row in _rows(events)] == [CAR_PLATE]
    errors = [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]
    assert len(errors) == 2 and "cannot write" in errors[0] and "readonly database" in errors[0], errors
    assert "1 reads not written before exit" in errors[1], errors
