"""Where frames come from: a video file, a folder of images, a stream URL or a camera index, sampled at `fps`.

A file or folder is read whole: every sampled frame is yielded. A stream or camera is live: frames are read as
they arrive (so that OpenCV's buffer never grows into delay), and those due at `fps` are yielded; the caller may
skip them. A live source that drops is reopened with backoff.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import cv2
import numpy as np

from plates.exceptions import InvalidInputError, SourceUnavailableError
from plates.photos.files import IMAGE_SUFFIXES, image_files, read_image

log = logging.getLogger(__name__)

STREAM_SCHEMES = ("rtsp://", "rtsps://", "http://", "https://", "udp://", "tcp://", "rtmp://", "srt://")
OPEN_TIMEOUT_MS = 10_000
READ_TIMEOUT_MS = 10_000
REOPEN_BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)  # seconds before each try; the last repeats


@dataclass(frozen=True)
class Frame:
    index: int  # position in the source: the video's frame number, the folder's file number, frames read live
    media_time: float  # seconds from the source's start: the video's clock, or time since watching began
    wall_time: float  # Unix time the frame was read
    image: np.ndarray


class FolderSource:
    """The images of a folder in name order, each one a frame `1 / fps` after the one before."""

    live = False

    def __init__(self, folder: Path, fps: float) -> None:
        self.paths = image_files(folder)
        if not self.paths:
            raise InvalidInputError(f"{folder}: no images ({', '.join(sorted(IMAGE_SUFFIXES))}) in this folder")
        self.fps = fps
        self.total = len(self.paths)

    def frames(self, stop: threading.Event | None = None) -> Iterator[Frame]:
        # Read whole: the watcher checks `stop` between frames.
        for index, path in enumerate(self.paths):
            yield Frame(index, index / self.fps, time.time(), read_image(path))

    def close(self) -> None:
        pass


class VideoSource:
    """A video file (read whole) or a live stream or camera (read as it comes, reopened when it drops)."""

    def __init__(self, name: str, open_capture: Callable[[], cv2.VideoCapture], fps: float, live: bool) -> None:
        self.name, self._open, self.fps, self.live = name, open_capture, fps, live
        self._capture = open_capture()
        if not self._capture.isOpened():
            error = SourceUnavailableError if live else InvalidInputError
            raise error(f"{name}: cannot open it as a video")
        self._video_fps = self._capture.get(cv2.CAP_PROP_FPS) or 0.0
        count = self._capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0
        sampled = count * min(1.0, fps / self._video_fps) if self._video_fps > 0 else 0
        self.total = math.ceil(sampled) if not live and sampled > 0 else None

    def frames(self, stop: threading.Event | None = None) -> Iterator[Frame]:
        """The frames; a live source's also end once `stop` is set, even while it waits to reopen."""
        return self._live_frames(stop or threading.Event()) if self.live else self._file_frames()

    def _file_frames(self) -> Iterator[Frame]:
        # Sampled by the video's own clock: a file is read faster or slower than real time, frame by frame.
        period = 1.0 / self.fps
        due = 0.0
        index = -1
        while self._capture.grab():
            index += 1
            media_time = index / self._video_fps if self._video_fps > 0 else index * period
            if media_time + 1e-6 < due:
                continue
            ok, image = self._capture.retrieve()
            if not ok:
                raise InvalidInputError(f"{self.name}: cannot decode frame {index}")
            due = (math.floor(media_time / period + 1e-6) + 1) * period
            yield Frame(index, media_time, time.time(), image)

    def _live_frames(self, stop: threading.Event) -> Iterator[Frame]:
        # Sampled by the wall clock; frames that are not due are grabbed and dropped without decoding.
        period = 1.0 / self.fps
        start = time.monotonic()
        due = start
        index = -1
        failures = 0
        while not stop.is_set():
            if not self._capture.grab():
                self._reopen(failures, stop)
                failures += 1
                continue
            failures = 0
            index += 1
            now = time.monotonic()
            if now < due:
                continue
            ok, image = self._capture.retrieve()
            if not ok:
                continue
            due = max(due + period, now)
            yield Frame(index, now - start, time.time(), image)

    def _reopen(self, failures: int, stop: threading.Event) -> None:
        delay = REOPEN_BACKOFF[min(failures, len(REOPEN_BACKOFF) - 1)]
        log.warning("%s: no frames; reopening in %.0f s", self.name, delay)
        self._capture.release()
        if not stop.wait(delay):
            self._capture = self._open()

    def close(self) -> None:
        self._capture.release()


def without_password(spec: str) -> str:
    """`spec` as events and logs may show it: a stream URL's password (rtsp://user:secret@cam) starred out."""
    parts = urlsplit(spec)
    if parts.password is None:
        return spec
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def is_live(spec: str) -> bool:
    """Whether `spec` names a camera or a stream, read as it comes, rather than a file or folder read whole."""
    return spec.isdigit() or spec.lower().startswith(STREAM_SCHEMES)


def open_source(spec: str, fps: float) -> FolderSource | VideoSource:
    """The source `spec` names: a camera index (`0`), a stream URL, a folder of images, or a video file."""
    if not fps > 0:
        raise InvalidInputError(f"--fps must be above 0, got {fps}")
    if spec.isdigit():
        return VideoSource(f"camera {spec}", lambda: cv2.VideoCapture(int(spec)), fps, live=True)
    if spec.lower().startswith(STREAM_SCHEMES):
        params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, OPEN_TIMEOUT_MS, cv2.CAP_PROP_READ_TIMEOUT_MSEC, READ_TIMEOUT_MS]
        name = without_password(spec)
        return VideoSource(name, lambda: cv2.VideoCapture(spec, cv2.CAP_FFMPEG, params), fps, live=True)
    path = Path(spec)
    if path.is_dir():
        return FolderSource(path, fps)
    if not path.is_file():
        raise InvalidInputError(f"{spec}: no such file or folder, and not a camera index or stream URL")
    return VideoSource(spec, lambda: cv2.VideoCapture(spec, cv2.CAP_FFMPEG), fps, live=False)
