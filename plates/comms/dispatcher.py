"""Events out to every transport: each event as an `event` message of its camera, and a watched one also as an
`alert`; a visit inside too long as an `overstay` message of its entrance camera."""

from __future__ import annotations

import json
from typing import Protocol

import numpy as np

from plates.watch.events import Event


class Transport(Protocol):
    def publish(self, camera_id: str, kind: str, payload: str) -> None:
        """Queue `payload` as the camera's `kind` message ("event" or "alert"); never blocks on the network."""

    def close(self) -> None: ...

    def summary(self) -> str: ...


class Dispatcher:
    """A sink of plates.watch shared by the cameras of a site; the site closes it once every camera is done."""

    def __init__(self, transports: list[Transport]) -> None:
        self.transports = transports

    def emit(self, event: Event, crop: np.ndarray | None) -> None:
        payload = json.dumps(event.to_dict(), ensure_ascii=False)
        for transport in self.transports:
            transport.publish(event.camera_id, "event", payload)
            if event.watched is not None:
                transport.publish(event.camera_id, "alert", payload)

    def send(self, camera_id: str, payload: dict) -> None:
        """A site's alert that is no event, as its camera's `payload["kind"]` message (overstay)."""
        text = json.dumps(payload, ensure_ascii=False)
        for transport in self.transports:
            transport.publish(camera_id, payload["kind"], text)

    def close(self) -> None:
        for transport in self.transports:
            transport.close()

    def summaries(self) -> list[str]:
        return [transport.summary() for transport in self.transports]
