"""Where events go: JSON lines on stdout, a CSV file, a webhook, the best crop of each plate in a folder, the site's
store."""

from __future__ import annotations

import csv
import json
import logging
import queue
import re
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

import cv2
import numpy as np
from tqdm import tqdm

from plates.exceptions import InvalidInputError
from plates.store.sightings import Sighting, direction
from plates.watch.events import Event

if TYPE_CHECKING:  # SQLAlchemy loads only where a store is given
    from plates.store.writer import StoreWriter

log = logging.getLogger(__name__)


class Sink(Protocol):
    def emit(self, event: Event, crop: np.ndarray | None) -> None: ...

    def close(self) -> None: ...


class JsonLinesSink:
    """One line per event; one sink serves every camera of a site, so that their lines never interleave."""

    def __init__(self, stream: TextIO = sys.stdout) -> None:
        self.stream = stream
        self._lock = threading.Lock()

    def emit(self, event: Event, crop: np.ndarray | None) -> None:
        line = json.dumps(event.to_dict(), ensure_ascii=False)
        with self._lock:
            # Through tqdm, so that a progress bar on the terminal is redrawn below the line, not through it.
            tqdm.write(line, file=self.stream)
            self.stream.flush()

    def close(self) -> None:
        pass


class CsvSink:
    FIELDS = (
        "source",
        "camera_id",
        "track",
        "text",
        "text_score",
        "region_code",
        "region_name",
        "first_seen",
        "last_seen",
        "first_seen_at",
        "last_seen_at",
        "best_frame",
        "box",
        "readings",
        "watched_plate",
        "watched_label",
        "watched_distance",
        "motion",
    )

    def __init__(self, path: Path) -> None:
        try:
            self._file = open(path, "w", newline="", encoding="utf-8")
        except OSError as error:
            raise InvalidInputError(f"--csv {path}: cannot write: {error.strerror}") from error
        self._writer = csv.DictWriter(self._file, self.FIELDS)
        self._writer.writeheader()
        self._file.flush()

    def emit(self, event: Event, crop: np.ndarray | None) -> None:
        self._writer.writerow(event.to_row())
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class CropSink:
    """`DIR/<track>_<text>.jpg`: the plate as cut from the frame of its best reading."""

    def __init__(self, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InvalidInputError(f"--save-crops {folder}: cannot create it: {error.strerror}") from error
        self.folder = folder

    def emit(self, event: Event, crop: np.ndarray | None) -> None:
        if crop is None or not crop.size:
            return
        name = re.sub(r"[^0-9A-Z]", "", event.text or "") or "unread"
        path = self.folder / f"{event.track}_{name}.jpg"
        if not cv2.imwrite(str(path), crop):
            log.warning("--save-crops: could not write %s", path)

    def close(self) -> None:
        pass


class WebhookSink:
    """POSTs each event as JSON from a background thread, so a slow or absent receiver never holds up reading.

    A failed POST is retried after `backoff` seconds, doubling, `retries` times, then logged and dropped.
    `close` gives the events still queued up to `drain_timeout` seconds to go out.
    """

    def __init__(
        self, url: str, retries: int = 4, backoff: float = 0.5, timeout: float = 5.0, drain_timeout: float = 10.0
    ) -> None:
        if not url.lower().startswith(("http://", "https://")):
            raise InvalidInputError(f"--webhook {url}: must be an http:// or https:// URL")
        self.url, self.retries, self.backoff, self.timeout, self.drain_timeout = (
            url,
            retries,
            backoff,
            timeout,
            drain_timeout,
        )
        self._queue: queue.Queue[dict | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="webhook", daemon=True)
        self._thread.start()

    def emit(self, event: Event, crop: np.ndarray | None) -> None:
        self._queue.put(event.to_dict())

    def send(self, camera_id: str, payload: dict) -> None:
        """POST another message than an event (an overstay alert, its `kind` in it), as events go."""
        self._queue.put(payload)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(self.drain_timeout)
        if self._thread.is_alive():
            log.warning("webhook %s: %d events not delivered before exit", self.url, self._queue.qsize() - 1)

    def _run(self) -> None:
        while (payload := self._queue.get()) is not None:
            self._deliver(payload)

    def _deliver(self, payload: dict) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode()
        delay = self.backoff
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(
                self.url, data=body, headers={"Content-Type": "application/json"}, method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout):
                    return
            except (urllib.error.URLError, OSError, ValueError) as error:
                reason = getattr(error, "reason", error)
                if attempt == self.retries:
                    what = (
                        f"event of track {payload['track']}" if "track" in payload else payload.get("kind", "message")
                    )
                    log.warning("webhook %s: %s not delivered after %d tries: %s", self.url, what, attempt + 1, reason)
                    return
            time.sleep(delay)
            delay *= 2


def _moment(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


class StoreSink:
    """Each event as a read of the site's store (plates.store), in its camera's role; the writer's thread writes
    it, so a slow database never holds up reading."""

    def __init__(self, writer: StoreWriter, roles: dict[str, tuple[str, str]]) -> None:
        """`roles`: each camera's role and the motion of a car coming in (plates.store.sightings.direction)."""
        self.writer, self.roles = writer, roles

    def emit(self, event: Event, crop: np.ndarray | None) -> None:
        role, entry_motion = self.roles.get(event.camera_id, ("none", "towards"))
        jpeg = None
        if crop is not None and crop.size:
            ok, encoded = cv2.imencode(".jpg", crop)
            jpeg = encoded.tobytes() if ok else None
        self.writer.write(
            Sighting(
                camera_id=event.camera_id,
                seen_at=_moment(event.first_seen_at),
                last_seen_at=_moment(event.last_seen_at),
                text=event.text,
                text_score=event.text_score,
                candidates=list(event.candidates),
                box=list(event.box),
                source=event.source,
                track=event.track,
                readings=event.readings,
                motion=event.motion,
                direction=direction(role, event.motion, entry_motion),
                crop_jpeg=jpeg,
            )
        )

    def close(self) -> None:
        self.writer.close()
