"""plates watch against the real server and a real MQTT broker: mosquitto from Debian's packages (the README's
prerequisites), started here on 127.0.0.1 on a free port with its own config file, killed and started again."""

from __future__ import annotations

import getpass
import json
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from plates.cli.main import main
from plates.server.launcher import free_port

from .videos import write_plate_video

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


class Mosquitto:
    """A broker of our own: persistence on, saved at every change, so that a subscriber's session and the messages
    queued for it outlive a kill -9 (the subscriber is the test's; plates watch must not need it)."""

    def __init__(self, folder: Path) -> None:
        if not os.access(MOSQUITTO, os.X_OK):
            pytest.fail("mosquitto not found: install it as the README's prerequisites say (apt-get install mosquitto)")
        self.port, self.folder = free_port(), folder
        self.config = folder / "mosquitto.conf"
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
            f"persistence_location {folder}/\nautosave_on_changes true\nautosave_interval 1\n"
            f"log_dest file {folder}/mosquitto.log\nuser {getpass.getuser()}\n"
        )
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(self.config)], stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert self.process.poll() is None, f"mosquitto exited: {self.process.stderr.read().decode()}"
                assert time.monotonic() < deadline, "mosquitto did not listen within 10 s"
                time.sleep(0.05)

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def broker(tmp_path):
    server = Mosquitto(tmp_path)
    server.start()
    yield server
    server.kill()


class Listener:
    """A subscriber to plates/# and homeassistant/#, keeping (topic, payload, retained, time received)."""

    def __init__(self, port: int, persistent: bool = False) -> None:
        self.messages: list[tuple[str, str, bool, float]] = []
        self.lock = threading.Lock()
        subscribed = threading.Event()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"listener-{free_port()}", clean_session=not persistent
        )
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe([("plates/#", 1), ("homeassistant/#", 1)])
        self.client.on_subscribe = lambda *args: subscribed.set()
        self.client.on_message = self._received
        self.client.reconnect_delay_set(0.1, 0.5)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        assert subscribed.wait(10), "the test's subscriber did not subscribe"

    def _received(self, client, userdata, message) -> None:
        with self.lock:
            self.messages.append((message.topic, message.payload.decode(), bool(message.retain), time.time()))

    def on(self, topic: str) -> list[str]:
        with self.lock:
            return [payload for t, payload, _, _ in self.messages if t == topic]

    def wait_for(self, topic: str, count: int, timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        while len(self.on(topic)) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.on(topic)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def listen():
    listeners = []

    def start(port: int, persistent: bool = False) -> Listener:
        listeners.append(Listener(port, persistent))
        return listeners[-1]

    yield start
    for listener in listeners:
        listener.close()


@pytest.fixture(scope="module")
def plate_video(samples, tmp_path_factory):
    return write_plate_video(samples, tmp_path_factory.mktemp("watch_mqtt") / "plate.avi")


def test_two_cameras_publish_their_events_alerts_and_discovery(triton_url, plate_video, broker, listen, tmp_path,
                                                               capsys):  # fmt: skip
    site = tmp_path / "site.yaml"
    site.write_text(
        f"watchlist: [B840CK197 delivery]\ncameras:\n  - {{camera_id: gate, source: {plate_video}, fps: 2}}\n"
        f"  - {{camera_id: yard, source: {plate_video}, fps: 2}}\n"
    )
    listener = listen(broker.port)
    assert main(["watch", "--config", str(site), "--url", triton_url, "--mqtt", f"mqtt://127.0.0.1:{broker.port}"]) == 0
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert sorted((e["camera_id"], e["text"]) for e in events) == [("gate", "B840CK197"), ("yard", "B840CK197")], err
    for camera in ("gate", "yard"):
        [event] = [e for e in events if e["camera_id"] == camera]
        assert event["watched"] == {"plate": "B840CK197", "label": "delivery", "distance": 0.0}
        # close() waited for the broker's acknowledgements; the subscriber gets them a moment later.
        assert [json.loads(p) for p in listener.wait_for(f"plates/{camera}/event", 1, 10)] == [event]
        assert [json.loads(p) for p in listener.wait_for(f"plates/{camera}/alert", 1, 10)] == [event]
    assert "2 of 2 events and 2 of 2 alerts delivered; 0 events and 0 alerts held" in err

    # What a Home Assistant starting now finds retained: the configs of both cameras, and plates watch offline.
    late = listen(broker.port)
    deadline = time.monotonic() + 10
    while len(late.messages) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    retained = {topic: payload for topic, payload, was_retained, _ in late.messages if was_retained}
    assert retained.pop("plates/status") == "offline"
    assert sorted(retained) == sorted(
        f"homeassistant/{component}/plates_{camera}/{entity}/config"
        for camera in ("gate", "yard") for component, entity in (("event", "watched_plate"), ("sensor", "last_plate"))
    )  # fmt: skip
    configs = [json.loads(payload) for payload in retained.values()]
    assert {c["unique_id"] for c in configs} == {"plates_gate_last_plate", "plates_gate_watched_plate",
                                                 "plates_yard_last_plate", "plates_yard_watched_plate"}  # fmt: skip
    assert all(c["availability_topic"] == "plates/status" for c in configs)


def test_a_broker_killed_mid_video_loses_no_event_and_a_fuzzy_watched_plate_alerts(triton_url, samples, broker,
                                                                                   listen, tmp_path):  # fmt: skip
    video = write_plate_video(samples, tmp_path / "passes.avi", passes=3)
    watchlist = tmp_path / "watchlist.txt"
    watchlist.write_text("B84OCK197 look-alike\n")  # the letter O for the zero: half an edit from the plate
    listener = listen(broker.port, persistent=True)
    watch = subprocess.Popen(
        [sys.executable, "-m", "plates.cli.main", "watch", str(video), "--url", triton_url, "--fps", "5",
         "--camera-id", "gate", "--watchlist", str(watchlist), "--max-distance", "1",
         "--mqtt", f"mqtt://127.0.0.1:{broker.port}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert listener.wait_for("plates/gate/event", 1, 120), "no event reached the broker"
        broker.kill()
        # Read what plates watch writes while the broker is away, to the end of the video.
        printed, selector = [], selectors.DefaultSelector()
        selector.register(watch.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 120
        while len(printed) < 3 and time.monotonic() < deadline:
            if selector.select(timeout=1):
                printed.append(watch.stdout.readline())
        assert len(printed) == 3, f"plates watch printed {printed}"
        broker.start()
        _, err = watch.communicate(timeout=60)
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    assert watch.returncode == 0, err
    events = [json.loads(line) for line in printed]
    on_broker = [json.loads(p) for p in listener.wait_for("plates/gate/event", 3, 30)]
    # QoS 1 may deliver twice what the killed broker received but never acknowledged; nothing may be missing.
    assert [e for i, e in enumerate(on_broker) if e not in on_broker[:i]] == events, err
    watched = [e for e in events if e["watched"]]
    assert watched and all(e["watched"]["plate"] == "B84OCK197" and e["watched"]["distance"] == 0.5 for e in watched)
    alerts = [json.loads(p) for p in listener.wait_for("plates/gate/alert", len(watched), 30)]
    assert [e for i, e in enumerate(alerts) if e not in alerts[:i]] == watched
    summary = err.strip().splitlines()[-1]
    counts = re.search(r"(\d+) events and (\d+) alerts held while the broker was away, (\d+) and (\d+) of them "
                       r"delivered after; 0 dropped", summary)  # fmt: skip
    assert counts, err
    held_events, held_alerts, events_after, alerts_after = map(int, counts.groups())
    # The first event went out before the kill; the video's later ones waited for the broker.
    assert held_events >= 1 and (events_after, alerts_after) == (held_events, held_alerts), summary
    print(summary)
