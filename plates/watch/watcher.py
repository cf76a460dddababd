"""The loop of `plates watch`: frames to the service with a bounded number in flight, plates to tracks, tracks to
events.

Results are taken in frame order, so the tracker sees the frames in order. On a live source a frame that comes
while `max_in_flight` requests are out, or while the site's shared `slots` are all taken by its cameras, is
skipped: a slow server costs frames, not a growing delay. On a file the loop waits instead, so every sampled frame
is read.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
from tqdm import tqdm

from plates.client.service import Plate
from plates.exceptions import OverloadedError
from plates.watch.events import Reading, Track, crop_plate
from plates.watch.sinks import Sink
from plates.watch.source import Frame
from plates.watch.tracking import PlateTracker
from plates.watch.watchlist import Match


@dataclass
class Summary:
    frames: int = 0  # sampled frames read by the service
    skipped: int = 0  # sampled frames of a live source dropped because the service was busy
    events: int = 0
    watched: int = 0  # events that matched the watchlist
    tracker_seconds: float = 0.0  # time spent in the tracker's updates
    interrupted: bool = False

    def line(self, source: str, tracker: str) -> str:
        per_update = 1000 * self.tracker_seconds / self.frames if self.frames else 0.0
        return (
            f"{source}: {self.frames} frames read, {self.skipped} skipped, {self.events} events "
            f"({self.watched} watched); "
            f"{tracker} {per_update:.2f} ms per update"
        )


class Watchlist(Protocol):
    def match(self, candidates: Iterable[str]) -> Match | None: ...


class Watcher:
    """One camera: its frames to the service, its plates to tracks, its tracks to events for `sinks`.

    `slots`, shared by the cameras of a site, bounds the requests out at once across all of them. `stop`, set by
    the site on Ctrl-C, ends the loop as the end of its frames would. The sinks stay open: their owner closes them.
    """

    def __init__(
        self,
        name: str,
        recognize: Callable[[np.ndarray], list[Plate]],
        tracker: PlateTracker,
        sinks: Iterable[Sink],
        max_in_flight: int = 2,
        max_delay: float | None = None,
        keep_crops: bool = False,
        camera_id: str = "camera",
        watchlist: Watchlist | None = None,
        slots: threading.Semaphore | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.name, self._recognize, self.tracker, self.sinks = name, recognize, tracker, list(sinks)
        self.max_in_flight, self.max_delay, self.keep_crops = max_in_flight, max_delay, keep_crops
        self.camera_id, self.watchlist = camera_id, watchlist
        self.slots = slots or threading.Semaphore(max_in_flight)
        self.stop = stop or threading.Event()
        self.tracks: dict[int, Track] = {}
        self.summary = Summary()

    def run(self, frames: Iterable[Frame], live: bool, total: int | None = None, progress: bool = False) -> Summary:
        """Watch `frames` to their end or until `stop` is set; every open track ends as an event either way."""
        self._live = live
        pending: deque[tuple[Frame, Future]] = deque()
        pool = ThreadPoolExecutor(self.max_in_flight, thread_name_prefix=f"recognize-{self.camera_id}")
        bar = tqdm(total=total, unit="frame", disable=not progress, leave=False)
        try:
            for frame in frames:
                if self.stop.is_set():
                    break
                self._collect(pending, bar, wait=False)
                if len(pending) >= self.max_in_flight:
                    if live:
                        self.summary.skipped += 1
                        continue
                    self._collect(pending, bar, wait=True)
                if not self.slots.acquire(blocking=not live):
                    self.summary.skipped += 1  # the other cameras hold every slot of the site
                    continue
                pending.append((frame, pool.submit(self._recognize_in_slot, frame.image)))
                if live and self.max_delay is not None:
                    self._report_overdue(time.time())
            while pending:
                self._collect(pending, bar, wait=True)
            self.summary.interrupted = self.stop.is_set()
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            # A request cancelled before it ran never gave its slot back.
            for _, future in pending:
                if future.cancelled():
                    self.slots.release()
            bar.close()
            for track in list(self.tracks.values()):
                self._end(track)
        return self.summary

    def _recognize_in_slot(self, image: np.ndarray) -> list[Plate]:
        try:
            return self._recognize(image)
        finally:
            self.slots.release()

    def _collect(self, pending: deque, bar: tqdm, wait: bool) -> None:
        """Take the results at the head of `pending` that are ready (at least one if `wait`), in frame order."""
        while pending and (wait or pending[0][1].done()):
            frame, future = pending.popleft()
            bar.update()
            wait = False
            try:
                plates = future.result()
            except OverloadedError:
                if not self._live:
                    raise
                # A live frame the service refused even after the client's retries is a frame skipped, as one that
                # came while the requests in flight were full: the stream goes on.
                self.summary.skipped += 1
                continue
            self._step(frame, plates)

    def _step(self, frame: Frame, plates: list[Plate]) -> None:
        started = time.perf_counter()
        step = self.tracker.step(plates, frame.image, round(frame.media_time * self.tracker.fps))
        self.summary.tracker_seconds += time.perf_counter() - started
        self.summary.frames += 1
        for track_id, index in step.matched.items():
            plate = plates[index]
            track = self.tracks.setdefault(track_id, Track(track_id))
            crop = crop_plate(frame.image, plate.box) if self.keep_crops else None
            track.add(Reading(frame.index, frame.media_time, frame.wall_time, plate), crop)
        for track_id in step.confirmed:
            if track_id in self.tracks:
                self.tracks[track_id].confirmed = True
        for track_id in set(self.tracks) - step.followed:
            self._end(self.tracks[track_id])

    def _report_overdue(self, now: float) -> None:
        for track in self.tracks.values():
            if track.confirmed and not track.reported and now - track.readings[0].wall_time >= self.max_delay:
                self._report(track)

    def _end(self, track: Track) -> None:
        del self.tracks[track.id]
        if track.confirmed and not track.reported:
            self._report(track)

    def _report(self, track: Track) -> None:
        track.reported = True
        event, crop = track.event(self.name, self.camera_id), track.best_crop()
        if self.watchlist is not None:
            match = self.watchlist.match(text for text, _ in event.candidates)
            if match is not None:
                event = replace(event, watched=match)
                self.summary.watched += 1
        for sink in self.sinks:
            sink.emit(event, crop)
        self.summary.events += 1
