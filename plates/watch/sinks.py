"""Where events go: JSON lines on stdout, a CSV file, a webhook, the best crop of each plate in a folder."""

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
from pathlib import Path
from typing import Protocol, TextIO

import cv2
import numpy as np
from tqdm import tqdm

from plates.exceptions import InvalidInputError
from plates.watch.events import Event

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
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="webhook", daemon=True)
        self._thread.start()

    def emit(self, event: Event, crop: np.ndarray | None) -> None:
        self._queue.put(event)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(self.drain_timeout)
        if self._thread.is_alive():
            log.warning("webhook %s: %d events not delivered before exit", self.url, self._queue.qsize() - 1)

    def _run(self) -> None:
        while (event := self._queue.get()) is not None:
            self._deliver(event)

    def _deliver(self, event: Event) -> None:
        body = json.dumps(event.to_dict(), ensure_ascii=False).encode()
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
                    log.warning(
                        "webhook %s: event of track %d not delivered after %d tries: %s",
                        self.url,
                        event.track,
                        attempt + 1,
                        reason,
                    )
                    return
            time.sleep(delay)
            delay *= 2
