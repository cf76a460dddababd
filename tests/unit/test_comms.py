import json
import logging

import pytest

from plates.comms.dispatcher import Dispatcher
from plates.comms.mqtt import Broker, MqttTransport
from plates.exceptions import SettingsError
from plates.server.launcher import free_port
from plates.watch.events import Event
from plates.watch.watchlist import Match

EVENT = Event(
    "a.mp4",
    "gate",
    1,
    "B840CK197",
    0.4,
    None,
    1.0,
    3.5,
    "2025-01-01T00:00:01.000Z",
    "2025-01-01T00:00:03.500Z",
    12,
    [96.2, 331.8, 131.4, 344.0],
    6,
)
WATCHED = Event(**{**EVENT.__dict__, "track": 2, "watched": Match("B840CK197", "boss", 0.0, "B840CK197")})


def test_broker_url_gives_host_port_user_and_the_password_from_the_environment():
    broker = Broker.parse("mqtt://plates@broker.lan", {"PLATES_MQTT_PASSWORD": "s3cret"})
    assert (broker.host, broker.port, broker.username, broker.password, broker.tls) == (
        "broker.lan",
        1883,
        "plates",
        "s3cret",
        False,
    )
    assert Broker.parse("mqtts://broker.lan", {}).port == 8883
    assert Broker.parse("mqtts://broker.lan:9000", {}).tls
    assert "s3cret" not in repr(broker)


@pytest.mark.parametrize(
    "url, error",
    [
        ("http://broker:1883", "must start with mqtt:// or mqtts://"),
        ("mqtt://", "names no host"),
        ("mqtt://user:pw@broker", r"put the password in \$PLATES_MQTT_PASSWORD"),
        ("mqtt://broker:99999", "--mqtt mqtt://broker:99999: Port out of range"),
        ("mqtt://broker/topic", "no path"),
    ],
)
def test_a_bad_broker_url_is_an_error_naming_it(url, error):
    with pytest.raises(SettingsError, match=error):
        Broker.parse(url, {})


class Recording:
    def __init__(self) -> None:
        self.messages, self.closed = [], False

    def publish(self, camera_id, kind, payload) -> None:
        self.messages.append((camera_id, kind, json.loads(payload)))

    def close(self) -> None:
        self.closed = True

    def summary(self) -> str:
        return "recording"


def test_dispatcher_sends_every_event_and_a_watched_one_also_as_an_alert():
    transports = [Recording(), Recording()]
    dispatcher = Dispatcher(transports)
    dispatcher.emit(EVENT, None)
    dispatcher.emit(WATCHED, None)
    dispatcher.close()
    for transport in transports:
        assert [(c, k, m["track"]) for c, k, m in transport.messages] == [
            ("gate", "event", 1),
            ("gate", "event", 2),
            ("gate", "alert", 2),
        ]
        assert transport.messages[2][2]["watched"] == {"plate": "B840CK197", "label": "boss", "distance": 0.0}
        assert transport.closed
    assert dispatcher.summaries() == ["recording", "recording"]


def test_a_broker_that_never_answers_holds_events_up_to_the_queue_and_counts_the_rest(caplog):
    # Nothing listens on the port: the events wait in the queue (3 messages), the rest are dropped and logged.
    transport = MqttTransport(
        Broker("127.0.0.1", free_port(), None, None, False), ["gate"], None, queue_size=3, drain_timeout=0.5
    )
    with caplog.at_level(logging.WARNING):
        for _ in range(5):
            transport.publish("gate", "event", "{}")  # returns at once, broker or not
        transport.close()
    counts = transport.counts["event"]
    assert (counts.sent, counts.held, counts.delivered, counts.dropped) == (3, 3, 0, 2)
    assert "queue full, 1 messages dropped so far" in caplog.text
    assert "3 events and alerts not delivered before exit" in caplog.text
    assert "3 events and 0 alerts held while the broker was away, 0 and 0 of them delivered after; 2 dropped" in (
        transport.summary()
    )
