"""plates watch against the real server and a real MQTT broker: mosquitto from Debian's packages (the README's
prerequisites), started here on 127.0.0.1 on a free port with its own config file, killed and started again."""

from __future__ import annotations

import json
import logging
import os
import re
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest
from readings import CAR_PLATE

from plates.cli.main import main
from plates.comms.mqtt import Broker, MqttTransport

from .mosquitto import PASSWORD, USER, Listener, Mosquitto
from .videos import write_plate_video


@pytest.fixture
def broker(tmp_path):
    server = Mosquitto(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def listen():
    listeners = []

    def start(port: int, persistent: bool = False, ca: Path | None = None) -> Listener:
        listeners.append(Listener(port, persistent, ca))
        return listeners[-1]

    yield start
    for listener in listeners:
        listener.close()


@pytest.fixture(scope="module")
def plate_video(samples, tmp_path_factory):
    return write_plate_video(samples, tmp_path_factory.mktemp("watch_mqtt") / "plate.avi")


def test_two_cameras_publish_their_events_alerts_and_discovery(
    triton_url, plate_video, broker, listen, tmp_path, capsys
):
    site = tmp_path / "site.yaml"
    # 5 frames a second, the default: enough readings to settle car.jpg's close C (tests/integration/test_watch.py)
    site.write_text(
        f"watchlist: [{CAR_PLATE} delivery]\ncameras:\n  - {{camera_id: gate, source: {plate_video}, fps: 5}}\n"
        f"  - {{camera_id: yard, source: {plate_video}, fps: 5}}\n"
    )
    listener = listen(broker.port)
    assert main(["watch", "--config", str(site), "--url", triton_url, "--mqtt", f"mqtt://127.0.0.1:{broker.port}"]) == 0
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert sorted((e["camera_id"], e["text"]) for e in events) == [("gate", CAR_PLATE), ("yard", CAR_PLATE)], err
    for camera in ("gate", "yard"):
        [event] = [e for e in events if e["camera_id"] == camera]
        assert event["watched"] == {"plate": CAR_PLATE, "label": "delivery", "distance": 0.0}
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
        for camera in ("gate", "yard")
        for component, entity in (("event", "watched_plate"), ("sensor", "last_plate"))
    )
    configs = [json.loads(payload) for payload in retained.values()]
    assert {c["unique_id"] for c in configs} == {
        "plates_gate_last_plate",
        "plates_gate_watched_plate",
        "plates_yard_last_plate",
        "plates_yard_watched_plate",
    }
    assert all(c["availability_topic"] == "plates/status" for c in configs)


def test_a_broker_killed_mid_video_loses_no_event_and_a_fuzzy_watched_plate_alerts(
    triton_url, samples, broker, listen, tmp_path
):
    video = write_plate_video(samples, tmp_path / "passes.avi", passes=3)
    watchlist = tmp_path / "watchlist.txt"
    watchlist.write_text("B84OCK197 look-alike\n")  # the letter O for the zero: half an edit from the plate
    listener = listen(broker.port, persistent=True)
    watch = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "plates.cli.main",
            "watch",
            str(video),
            "--url",
            triton_url,
            "--fps",
            "5",
            "--camera-id",
            "gate",
            "--watchlist",
            str(watchlist),
            "--max-distance",
            "1",
            "--mqtt",
            f"mqtt://127.0.0.1:{broker.port}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
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
    # B840CK197 is half an edit away; a pass whose candidates lack it may match B840OK197, a whole edit away.
    assert all(e["watched"]["plate"] == "B84OCK197" and e["watched"]["distance"] <= 1 for e in watched)
    assert 0.5 in [e["watched"]["distance"] for e in watched]
    alerts = [json.loads(p) for p in listener.wait_for("plates/gate/alert", len(watched), 30)]
    assert [e for i, e in enumerate(alerts) if e not in alerts[:i]] == watched
    summary = err.strip().splitlines()[-1]
    counts = re.search(
        r"(\d+) events and (\d+) alerts held while the broker was away, (\d+) and (\d+) of them "
        r"delivered after; 0 dropped",
        summary,
    )
    assert counts, err
    held_events, held_alerts, events_after, alerts_after = map(int, counts.groups())
    # The first event went out before the kill; the video's later ones waited for the broker.
    assert held_events >= 1 and (events_after, alerts_after) == (held_events, held_alerts), summary
    print(summary)


def test_discovery_goes_out_again_when_home_assistant_comes_back(broker, listen):
    transport = MqttTransport(Broker("127.0.0.1", broker.port, None, None, False), ["gate"], "homeassistant")
    listener = listen(broker.port)
    try:
        config = "homeassistant/sensor/plates_gate/last_plate/config"
        assert len(listener.wait_for(config, 1, 10)) == 1
        listener.client.publish("homeassistant/status", "online", qos=1)  # Home Assistant's birth message
        assert len(listener.wait_for(config, 2, 10)) == 2
    finally:
        transport.close()
    assert listener.wait_for("plates/status", 2, 10)[-1] == "offline"


def test_mqtts_with_a_user_and_the_password_from_the_environment(tmp_path, listen, monkeypatch, caplog):
    broker = Mosquitto(tmp_path, secure=True)
    broker.start()
    monkeypatch.setenv("SSL_CERT_FILE", str(broker.ca))  # the broker's certificate as the trusted CA
    try:
        listener = listen(broker.port, ca=broker.ca)
        url = f"mqtts://{USER}@127.0.0.1:{broker.port}"
        transport = MqttTransport(Broker.parse(url, {"PLATES_MQTT_PASSWORD": PASSWORD}), ["gate"], None)
        transport.publish("gate", "event", '{"track": 1}')
        transport.close()
        assert listener.wait_for("plates/gate/event", 1, 10) == ['{"track": 1}']
        # A wrong password: refused and said so, the event held rather than lost.
        with caplog.at_level(logging.WARNING):
            refused = MqttTransport(
                Broker.parse(url, {"PLATES_MQTT_PASSWORD": "wrong"}), ["gate"], None, drain_timeout=1
            )
            refused.publish("gate", "event", '{"track": 2}')
            refused.close()
        assert "the broker refused the connection: Not authorized" in caplog.text
        assert refused.counts["event"].held == 1 and refused.counts["event"].delivered == 0
    finally:
        broker.kill()
