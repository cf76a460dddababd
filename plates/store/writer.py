"""Writing sightings from a thread of their own, so that a slow or absent database never holds up reading.

While the database cannot be written (PostgreSQL restarting, a network cut, a locked or full disk: SQLAlchemy's
OperationalError), the sightings wait in memory in their order and the writer tries again, backing off to `max_backoff`
seconds: nothing is dropped, and one line says the store is failing and one that it is back. What has queued is written
in one transaction, so a process killed mid-write leaves every committed read whole and those in flight absent.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import simplejpeg
from sqlalchemy.exc import InterfaceError, OperationalError

from plates.exceptions import InvalidInputError, SettingsError
from plates.photos.decoding import decode_pixels
from plates.store.database import Store
from plates.store.records import Overstay, Retention, VisitRules, close_absent, due_overstays, purge, record_many
from plates.store.sightings import Sighting

log = logging.getLogger(__name__)

OnOverstay = Callable[[Overstay, datetime], None]


class GaveUp(Exception):
    """The database stayed unwritable past the drain timeout of a writer that is closing."""


PURGE_EVERY = timedelta(hours=1)
# Sightings written in one transaction when they queue up faster than one by one: a burst of cameras, a database
# back after an outage. Each commit costs a disk sync; a batch shares one.
BATCH = 200


def cut_crop(photo: bytes, box: list[float], margin: float = 0.1) -> bytes | None:
    """The plate at `box` (x1, y1, x2, y2 in the upright photo's pixels, as the service answers) cut from `photo`
    with a margin of `margin` of its height, as JPEG; None where the photo cannot be decoded or the box is outside
    it."""
    try:
        pixels = decode_pixels(photo, "photo")
    except InvalidInputError:
        return None
    x1, y1, x2, y2 = box[:4]
    pad = margin * (y2 - y1)
    height, width = pixels.shape[:2]
    left, top = max(0, int(x1 - pad)), max(0, int(y1 - pad))
    right, bottom = min(width, int(x2 + pad + 1)), min(height, int(y2 + pad + 1))
    if right <= left or bottom <= top:
        return None
    return simplejpeg.encode_jpeg(np.ascontiguousarray(pixels[top:bottom, left:right]), 90, colorspace="BGR")


class StoreWriter:
    """`write(sighting)` queues; `close()` waits for the queue to reach the database while it does, and gives up
    after `drain_timeout` seconds without a write.

    `live`: where a site replays recorded files (False), "now" for the absent timer, overstays and the purge is the
    latest time a sighting was seen; where its cameras are live, it is also the wall clock, checked every `tick` s.
    """

    def __init__(
        self,
        store: Store,
        rules: VisitRules = VisitRules(),
        crops: Path | None = None,
        retention: Retention = Retention(),
        on_overstay: OnOverstay | None = None,
        live: bool = True,
        tick: float = 10.0,
        max_backoff: float = 5.0,
        drain_timeout: float = 30.0,
    ) -> None:
        self.store, self.rules, self.crops, self.on_overstay = store, rules, crops, on_overstay
        self.retention = retention
        self._purged: datetime | None = None
        self.live, self.tick, self.max_backoff, self.drain_timeout = live, tick, max_backoff, drain_timeout
        if crops is not None:
            try:
                crops.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise SettingsError(f"store_crops {crops}: cannot create it: {error.strerror}") from error
        self.written = 0
        self.lost = 0  # reads given up at exit, the database unwritable past the drain timeout
        self.failing_since: float | None = None
        self._latest: datetime | None = None
        self._queue: queue.Queue[Sighting | None] = queue.Queue()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, name="store", daemon=True)
        self._thread.start()

    def write(self, sighting: Sighting) -> None:
        self._queue.put(sighting)

    def waiting(self) -> int:
        return self._queue.qsize()

    def close(self) -> None:
        self._queue.put(None)
        self._closing.set()
        # As long as the queue goes down: a backlog the database is writing is waited for, a database that stopped
        # writing is given `drain_timeout` seconds (the thread then gives up and says how many reads it lost).
        written, since = self.written, time.monotonic()
        while self._thread.is_alive() and time.monotonic() - since < self.drain_timeout + self.max_backoff + 5:
            self._thread.join(0.5)
            if self.written != written:
                written, since = self.written, time.monotonic()
        if self._thread.is_alive():
            log.error("store %s: %d reads not written before exit", self.store.where(), self._queue.qsize())
        self.store.close()

    def _run(self) -> None:
        while True:
            try:
                sighting = self._queue.get(timeout=self.tick)
            except queue.Empty:
                if self.live:
                    try:
                        self._retrying(lambda: self._check(datetime.now(timezone.utc)))
                    except Exception as error:  # the thread lives on: the next tick checks again
                        log.error("store: the check of visits failed: %s", error)
                continue
            if sighting is None:
                self._report_lost()
                return
            batch, closing = [sighting], False
            while len(batch) < BATCH:
                try:
                    queued = self._queue.get_nowait()
                except queue.Empty:
                    break
                if queued is None:
                    closing = True
                    break
                batch.append(queued)
            crops = [self._save_crop(sighting) for sighting in batch]
            try:
                # Written, then checked, each retried alone: a check that fails must not write the batch again.
                self._retrying(lambda: self._write(batch, crops))
            except GaveUp:
                self.lost += len(batch)
            except Exception:
                # Not the database away (that is retried) but a read it refuses: each alone, so that only it is lost.
                for sighting, crop in zip(batch, crops):
                    try:
                        self._retrying(lambda: self._write([sighting], [crop]))
                    except GaveUp:
                        self.lost += 1
                    except Exception as error:
                        log.error("store: read of %s at %s refused: %s", sighting.camera_id, sighting.seen_at, error)
            if self._latest is not None and not self.lost:
                now = self._latest if not self.live else max(self._latest, datetime.now(timezone.utc))
                try:
                    self._retrying(lambda: self._check(now))
                except Exception as error:  # the thread lives on: the next batch checks again
                    log.error("store: the check of visits failed: %s", error)
            if closing:
                self._report_lost()
                return

    def _report_lost(self) -> None:
        if self.lost:
            log.error(
                "store %s: %d reads not written before exit: the database stayed unwritable",
                self.store.where(),
                self.lost,
            )

    def _retrying(self, attempt: Callable[[], object]) -> None:
        delay = 0.1
        while True:
            try:
                attempt()
            except (OperationalError, InterfaceError, OSError) as error:
                if self.failing_since is None:
                    self.failing_since = time.monotonic()
                    reason = getattr(error, "orig", None) or error
                    log.error("store %s: cannot write, holding reads until it can: %s", self.store.where(), reason)
                if self._closing.is_set() and time.monotonic() - self.failing_since > self.drain_timeout:
                    raise GaveUp from error
                time.sleep(delay)
                delay = min(delay * 2, self.max_backoff)
                continue
            if self.failing_since is not None:
                log.warning(
                    "store %s: writing again after %.1f s", self.store.where(), time.monotonic() - self.failing_since
                )
                self.failing_since = None
            return

    def _write(self, batch: list[Sighting], crops: list[str | None]) -> None:
        with self.store.session() as session:
            record_many(session, batch, self.rules, crops)
        self.written += len(batch)
        latest = max(sighting.last_seen_at for sighting in batch)
        self._latest = max(self._latest or latest, latest)

    def _save_crop(self, sighting: Sighting) -> str | None:
        if self.crops is None:
            return None
        jpeg = sighting.crop_jpeg or (cut_crop(sighting.photo, sighting.box) if sighting.photo else None)
        if not jpeg:
            return None
        name = f"{sighting.seen_at:%Y-%m-%d}/{uuid.uuid4().hex}.jpg"
        path = self.crops / name
        try:
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(jpeg)
        except OSError as error:  # the read is kept without its crop: a full disk must not hold up the database
            log.warning("store: crop not saved to %s: %s", path, error.strerror)
            return None
        return name

    def _check(self, now: datetime) -> None:
        with self.store.session() as session:
            due = due_overstays(session, now, self.rules)
            close_absent(session, now, self.rules)
        if self._purged is None or now - self._purged >= PURGE_EVERY:
            self._purge(now)
        if self.on_overstay is not None:
            for overstay in due:
                self.on_overstay(overstay, now)

    def _purge(self, now: datetime) -> None:
        """The retention's purge, on start and hourly by the site's clock, so that no one has to remember it."""
        with self.store.session() as session:
            crops, reads, visits = purge(session, now, self.retention)
        self._purged = now
        for name in crops if self.crops is not None else []:
            (self.crops / name).unlink(missing_ok=True)
        if reads or visits:
            log.info("store: purged %d reads and %d visits past their retention", reads, visits)
