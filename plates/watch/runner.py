"""A site's cameras in one process: each camera's Watcher on its own thread, sharing the service, the site's sinks
and a bound on the requests out at once.

Each camera has its own source, tracker, requests and files, so one that stalls (a stream that stops sending, a
camera that reconnects) holds up none of the others. Every source is opened before any camera starts, so a wrong
path or URL stops the command at once instead of leaving a site half watched. A camera that fails later stops
alone; the command then exits with its error once the others are done.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np

from plates.client.service import Plate
from plates.watch.sinks import CropSink, CsvSink, Sink, WebhookSink
from plates.watch.site import CameraSettings, SiteSettings
from plates.watch.source import FolderSource, VideoSource, open_source, without_password
from plates.watch.tracking import PlateTracker
from plates.watch.watcher import Summary, Watcher, Watchlist

log = logging.getLogger(__name__)

Recognize = Callable[[np.ndarray], list[Plate]]


@dataclass
class CameraRun:
    settings: CameraSettings
    summary: Summary | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


def camera_sinks(camera: CameraSettings) -> list[Sink]:
    """The camera's own outputs: its CSV file, crops folder and webhook."""
    sinks: list[Sink] = []
    try:
        if camera.csv:
            sinks.append(CsvSink(camera.csv))
        if camera.save_crops:
            sinks.append(CropSink(camera.save_crops))
        if camera.webhook:
            sinks.append(WebhookSink(camera.webhook))
    except Exception:
        for sink in sinks:
            sink.close()
        raise
    return sinks


@contextmanager
def ctrl_c_held_back() -> Iterator[None]:
    """Ctrl-C (SIGINT) held back until the block ends, then raised as ever: a KeyboardInterrupt while cameras start
    would leave those already started running, with nothing to stop them, and the process hung on them. Only the
    main thread takes signals; elsewhere this holds nothing back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


class Site:
    """`run()` watches every camera until its frames end or Ctrl-C (KeyboardInterrupt in the calling thread).

    `recognize(live)` gives the function that reads a frame for a live or a file source (their retries differ);
    `shared` are the sinks every camera writes to; `watchlist` marks the events whose plate is watched.
    """

    def __init__(
        self,
        settings: SiteSettings,
        recognize: Callable[[bool], Recognize],
        shared: list[Sink],
        watchlist: Watchlist | None = None,
        open_source: Callable[[str, float], FolderSource | VideoSource] = open_source,
        progress: bool = False,
    ) -> None:
        self.settings, self.recognize, self.shared, self.watchlist = settings, recognize, shared, watchlist
        self.open_source, self.progress = open_source, progress
        self.stop = threading.Event()
        self.slots = threading.BoundedSemaphore(settings.max_in_flight_total)
        self._camera_sinks: dict[str, list[Sink]] = {}

    def notify(self, camera_id: str, payload: dict) -> None:
        """Send a site's alert that is no event (an overstay) where the camera's events go that can take one: MQTT
        and the camera's webhook."""
        for sink in self.shared + self._camera_sinks.get(camera_id, []):
            send = getattr(sink, "send", None)
            if send is not None:
                send(camera_id, payload)

    def run(self) -> list[CameraRun]:
        sources: list[FolderSource | VideoSource] = []
        outputs: list[list[Sink]] = []
        try:
            for camera in self.settings.cameras:
                sources.append(self.open_source(camera.source, camera.fps))
                outputs.append(camera_sinks(camera))
                self._camera_sinks[camera.camera_id] = outputs[-1]
            runs = [CameraRun(camera) for camera in self.settings.cameras]
            threads = [
                threading.Thread(target=self._watch, args=args, name=f"camera-{args[0].settings.camera_id}")
                for args in zip(runs, sources, outputs)
            ]
            try:
                with ctrl_c_held_back():
                    for thread in threads:
                        thread.start()
                self._wait(runs)
            except KeyboardInterrupt:
                self.stop.set()
                self._wait(runs)
        finally:
            for sinks in outputs:
                for sink in sinks:
                    sink.close()
            for source in sources:
                source.close()
        return runs

    @staticmethod
    def _wait(runs: list[CameraRun]) -> None:
        # On events, not Thread.join: a join that Ctrl-C interrupts can take its thread for ended (Python < 3.13).
        for run in runs:
            while not run.done.wait(0.5):
                pass

    def _watch(self, run: CameraRun, source: FolderSource | VideoSource, sinks: list[Sink]) -> None:
        camera = run.settings
        tracker = PlateTracker(camera.tracker, camera.fps, camera.lost_after)
        watcher = Watcher(
            without_password(camera.source),
            self.recognize(source.live),
            tracker,
            self.shared + sinks,
            camera.max_in_flight,
            camera.max_delay,
            keep_crops=camera.save_crops is not None or self.settings.store_crops is not None,
            camera_id=camera.camera_id,
            watchlist=self.watchlist,
            slots=self.slots,
            stop=self.stop,
        )
        frames = source.frames(self.stop)
        start = camera.start_time()
        if start is not None and not source.live:
            # A recording given its wall-clock start: each frame at the time it was filmed.
            frames = (replace(frame, wall_time=start + frame.media_time) for frame in frames)
        try:
            run.summary = watcher.run(frames, source.live, source.total, self.progress)
        except Exception as error:
            run.error = error
            run.summary = watcher.summary
            log.warning("camera %s stopped: %s", camera.camera_id, error)
        finally:
            run.done.set()
