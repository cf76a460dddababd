"""A mosquitto broker of the tests' own (Debian's package, the README's prerequisites) on 127.0.0.1 and a free port,
and a subscriber that keeps what it receives; tests/integration/test_watch_mqtt.py and benchmarks/watch_mqtt.py
use them. A secure broker takes TLS only, with a certificate for 127.0.0.1 made by openssl (installed with the
prerequisites' ca-certificates), and a user and password (mosquitto_passwd, of the mosquitto package)."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from plates.server.launcher import free_port

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
USER, PASSWORD = "plates", "s3cret-pw"


class Mosquitto:
    """A broker of our own: persistence on, saved at every change, so that a subscriber's session and the messages
    queued for it outlive a kill -9 (the subscriber is the test's; plates watch must not need it)."""

    def __init__(self, folder: Path, secure: bool = False) -> None:
        if not os.access(MOSQUITTO, os.X_OK):
            raise RuntimeError(
                "mosquitto not found: install it as the README's prerequisites say (apt-get install mosquitto)"
            )
        self.port, self.folder = free_port(), folder
        self.config = folder / "mosquitto.conf"
        self.ca = folder / "broker.crt" if secure else None
        access = "allow_anonymous true\n"
        if secure:
            subprocess.run(
                [
                    "openssl",
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-days",
                    "1",
                    "-subj",
                    "/CN=127.0.0.1",
                    "-addext",
                    "subjectAltName=IP:127.0.0.1",
                    "-keyout",
                    str(folder / "broker.key"),
                    "-out",
                    str(self.ca),
                ],
                check=True,
                capture_output=True,
            )
            subprocess.run(["mosquitto_passwd", "-b", "-c", str(folder / "passwords"), USER, PASSWORD], check=True)
            access = (
                f"allow_anonymous false\npassword_file {folder}/passwords\n"
                f"certfile {self.ca}\nkeyfile {folder}/broker.key\n"
            )
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\n{access}persistence true\n"
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
                if self.process.poll() is not None:
                    raise RuntimeError(f"mosquitto exited: {self.process.stderr.read().decode()}") from None
                if time.monotonic() > deadline:
                    raise RuntimeError("mosquitto did not listen within 10 s") from None
                time.sleep(0.05)

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Listener:
    """A subscriber to plates/# and homeassistant/#, keeping (topic, payload, retained, time received)."""

    def __init__(self, port: int, persistent: bool = False, ca: Path | None = None) -> None:
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
        if ca:
            self.client.tls_set(ca_certs=str(ca))
            self.client.username_pw_set(USER, PASSWORD)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        if not subscribed.wait(10):
            raise RuntimeError("the subscriber did not subscribe within 10 s")

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
