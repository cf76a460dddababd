"""The MQTT transport: events and alerts at QoS 1, held in a bounded queue while the broker is away.

paho-mqtt runs the connection on its own thread: it reconnects with backoff (RECONNECT_DELAY), and keeps every
QoS 1 message that the broker has not acknowledged, sending it again after a reconnect. Its queue is bounded
(`queue_size` messages); a message that finds it full is dropped, counted and logged. `publish` never waits on the
network, so a camera never waits for the broker.

On every connect the client publishes `plates/status` `online` (retained; `offline` is its last will) and, with
`discovery_prefix`, the Home Assistant discovery configs, again when Home Assistant says it came back online.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

from plates.comms.homeassistant import discovery_configs
from plates.comms.topics import OFFLINE, ONLINE, STATUS, camera_topic
from plates.exceptions import SettingsError

log = logging.getLogger(__name__)

PASSWORD_VARIABLE = "PLATES_MQTT_PASSWORD"
RECONNECT_DELAY = (0.5, 10.0)  # seconds: paho doubles the first up to the second while the broker stays away
KEEPALIVE = 30  # seconds; the broker sends the last will after 1.5 times this without a word from the client
LOG_DROPS_EVERY = 100  # a broker away for long drops many: the first and every 100th are logged


@dataclass(frozen=True)
class Broker:
    host: str
    port: int
    username: str | None
    password: str | None = field(repr=False)
    tls: bool

    @classmethod
    def parse(cls, url: str, environ: dict[str, str] | os._Environ = os.environ) -> Broker:
        """`mqtt://[user@]host[:1883]` or `mqtts://[user@]host[:8883]`; the password from $PLATES_MQTT_PASSWORD."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as error:
            raise SettingsError(f"--mqtt {url}: {error}") from error
        if parts.scheme not in ("mqtt", "mqtts"):
            raise SettingsError(f"--mqtt {url}: must start with mqtt:// or mqtts:// (TLS)")
        if not parts.hostname:
            raise SettingsError(f"--mqtt {url}: names no host")
        if parts.password is not None:
            raise SettingsError(
                f"--mqtt: put the password in ${PASSWORD_VARIABLE}, not in the URL (where ps and logs show it)"
            )
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise SettingsError(f"--mqtt {url}: a broker URL has no path, query or fragment")
        tls = parts.scheme == "mqtts"
        username = unquote(parts.username) if parts.username else None
        return cls(parts.hostname, port or (8883 if tls else 1883), username, environ.get(PASSWORD_VARIABLE), tls)


@dataclass
class Counts:
    sent: int = 0  # queued for the broker
    delivered: int = 0  # acknowledged by the broker
    held: int = 0  # queued while the broker was away
    delivered_after: int = 0  # of those, acknowledged once it was back
    dropped: int = 0  # the queue was full


class MqttTransport:
    """One connection to `broker` for the cameras `camera_ids`; thread-safe."""

    def __init__(
        self,
        broker: Broker,
        camera_ids: list[str],
        discovery_prefix: str | None = "homeassistant",
        queue_size: int = 10_000,
        drain_timeout: float = 30.0,
    ) -> None:
        self.broker, self.camera_ids, self.discovery_prefix = broker, camera_ids, discovery_prefix
        self.drain_timeout = drain_timeout
        self.counts = {"event": Counts(), "alert": Counts(), "overstay": Counts()}
        self._lock = threading.Condition()
        self._waiting: dict[int, tuple[str | None, bool]] = {}  # mid -> (kind, held) until the broker acknowledges
        self._early: set[int] = set()  # mids acknowledged before publish() returned them
        self._connected = self._was_connected = self._closing = False
        self._refusal: str | None = None
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"plates-watch-{uuid.uuid4().hex[:8]}")
        if broker.username:
            client.username_pw_set(broker.username, broker.password)
        if broker.tls:
            client.tls_set()  # the system's CAs (or $SSL_CERT_FILE), hostname checked
        client.will_set(STATUS, OFFLINE, qos=1, retain=True)
        client.max_queued_messages_set(queue_size)
        client.reconnect_delay_set(*RECONNECT_DELAY)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        client.on_connect_fail = self._on_connect_fail
        self._client = client
        client.connect_async(broker.host, broker.port, keepalive=KEEPALIVE)
        client.loop_start()

    # --- called by the dispatcher ---------------------------------------------------------------------------------

    def publish(self, camera_id: str, kind: str, payload: str) -> None:
        self._publish(camera_topic(camera_id, kind), payload, retain=False, kind=kind)

    def close(self) -> None:
        """Wait up to `drain_timeout` for the broker to acknowledge what is queued, say `offline`, disconnect."""
        deadline = time.monotonic() + self.drain_timeout
        with self._lock:
            while (left := self._undelivered()) and time.monotonic() < deadline:
                self._lock.wait(0.1)
        if left:
            log.warning("mqtt %s: %d events and alerts not delivered before exit", self.broker.host, left)
        self._closing = True
        if self._connected:
            # A clean disconnect sends no last will: the retained status says `offline` itself.
            status = self._client.publish(STATUS, OFFLINE, qos=1, retain=True)
            try:
                status.wait_for_publish(2.0)
            except (RuntimeError, ValueError):
                pass  # the connection dropped meanwhile: the broker sends the last will for it
        self._client.disconnect()
        self._client.loop_stop()

    def _undelivered(self) -> int:
        """Events and alerts not acknowledged yet (status and discovery messages are sent again on every connect)."""
        return sum(1 for kind, _ in self._waiting.values() if kind)

    def summary(self) -> str:
        with self._lock:
            event, alert = self.counts["event"], self.counts["alert"]
            return (
                f"mqtt {self.broker.host}:{self.broker.port}: {event.delivered} of {event.sent} events and "
                f"{alert.delivered} of {alert.sent} alerts delivered; {event.held} events and {alert.held} alerts "
                f"held while the broker was away, {event.delivered_after} and {alert.delivered_after} of them "
                f"delivered after; {event.dropped + alert.dropped} dropped (queue full)"
            )

    # --- paho's thread ---------------------------------------------------------------------------------------------

    def _publish(self, topic: str, payload: str, retain: bool, kind: str | None) -> None:
        held = not self._connected
        info = self._client.publish(topic, payload, qos=1, retain=retain)
        with self._lock:
            counts = self.counts.get(kind) if kind else None
            if info.rc == MQTTErrorCode.MQTT_ERR_QUEUE_SIZE:
                if counts:
                    counts.dropped += 1
                    dropped = sum(c.dropped for c in self.counts.values())
                    if dropped == 1 or dropped % LOG_DROPS_EVERY == 0:
                        log.warning("mqtt %s: queue full, %d messages dropped so far", self.broker.host, dropped)
                return
            held = held or info.rc == MQTTErrorCode.MQTT_ERR_NO_CONN
            if counts:
                counts.sent += 1
                counts.held += held
            if info.mid in self._early:
                self._early.discard(info.mid)
                self._acknowledged(kind, held)
            else:
                self._waiting[info.mid] = (kind, held)

    def _acknowledged(self, kind: str | None, held: bool) -> None:
        if kind:
            self.counts[kind].delivered += 1
            self.counts[kind].delivered_after += held
        self._lock.notify_all()

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        # Called with paho's queue locked: only this class's lock is taken here, never paho's under ours.
        with self._lock:
            if mid in self._waiting:
                self._acknowledged(*self._waiting.pop(mid))
            else:
                self._early.add(mid)

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            if self._refusal != str(reason_code):
                log.warning("mqtt %s: the broker refused the connection: %s", self.broker.host, reason_code)
            self._refusal = str(reason_code)
            return
        if self._refusal is not None or self._was_connected:
            log.warning("mqtt %s: connected again", self.broker.host)
        self._refusal, self._connected, self._was_connected = None, True, True
        self._publish(STATUS, ONLINE, retain=True, kind=None)
        if self.discovery_prefix:
            client.subscribe(f"{self.discovery_prefix}/status", qos=1)
            self._announce()

    def _on_connect_fail(self, client, userdata) -> None:
        if self._refusal != "unreachable":
            log.warning("mqtt %s:%d: cannot connect; trying again with backoff", self.broker.host, self.broker.port)
        self._refusal = "unreachable"

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        if self._connected and not self._closing:
            log.warning("mqtt %s: disconnected (%s); holding messages until it is back", self.broker.host, reason_code)
        self._connected = False

    def _on_message(self, client, userdata, message) -> None:
        # Home Assistant's birth message: it forgot what was not retained, so discovery goes out again.
        if message.payload == b"online":
            self._announce()

    def _announce(self) -> None:
        for topic, config in discovery_configs(self.camera_ids, self.discovery_prefix):
            self._publish(topic, json.dumps(config), retain=True, kind=None)
