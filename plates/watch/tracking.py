"""Following plates from frame to frame with ByteTrack (edgefirst-tracker; docs/performance.md, Tracking).

edgefirst-tracker is a Rust extension that needs numpy alone, so `plates watch` against a remote server loads no
PyTorch or Ultralytics (the client side, README: Installing only what you use).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from edgefirst.tracker import ByteTrack

from plates.client.service import Plate

TRACKERS = ("bytetrack",)

# Ultralytics' defaults, which plates watch ran before: a plate of this score starts a track and takes the first
# association pass, and a match needs this overlap between a track's predicted box and a plate's.
NEW_TRACK_SCORE = 0.25
MIN_IOU = 0.2


@dataclass(frozen=True)
class Step:
    """What one frame did to the tracks."""

    matched: dict[int, int]  # track id -> index of the plate in the frame that continues or starts it
    confirmed: set[int]  # ids of tracks seen in two frames or more (a one-frame detection is no plate)
    followed: set[int]  # ids of every track the tracker still follows, seen this frame or lost a while


class PlateTracker:
    """`step(plates)` per sampled frame, in order; a track is over once its id leaves `Step.followed`."""

    def __init__(self, kind: str = "bytetrack", fps: float = 5.0, lost_after: float = 1.0) -> None:
        if kind not in TRACKERS:
            raise ValueError(f"tracker must be one of {', '.join(TRACKERS)}, got {kind!r}")
        # The tracker's clock is the sampled frame's number: it drops a track whose last match is more than its
        # lifespan behind, so the lifespan is the sampled frames in `lost_after` seconds. A pair passes on its overlap
        # alone, the detector's score only ranking the pairs that pass, so a small plate that moved between two
        # sampled frames stays one track. The full Kalman update: the default damps it to a quarter, and the
        # predicted box then lags a moving plate (one 38 px wide moving 16 px a sampled frame made 4 tracks, not 1).
        self._tracker = ByteTrack(
            high_conf=NEW_TRACK_SCORE, iou=MIN_IOU, update=1.0, lifespan_ns=max(1, round(lost_after * fps))
        )
        self.kind, self.fps = kind, fps
        self._sampled = -1
        self._ids: dict[str, int] = {}  # the uuid of each track followed -> its number in events
        self._next_id = 1

    def step(self, plates: list[Plate], image: np.ndarray | None = None, sampled: int | None = None) -> Step:
        """Feed one frame's plates (`image`, the frame, is not needed: ByteTrack matches boxes alone).

        `sampled` is the frame's place among the sampled frames (its media time times fps). A live camera skips
        the frames that come while the service is busy; counting them keeps a lost track's patience at
        `lost_after` seconds instead of `lost_after * fps` frames read, which on a busy service is several times
        longer and holds every alert back as long.
        """
        self._sampled = self._sampled + 1 if sampled is None else max(sampled, self._sampled + 1)
        boxes = np.array([p.box for p in plates], np.float32).reshape(-1, 4)
        scores = np.array([p.score for p in plates], np.float32)
        # One class, plates. The extension takes usize labels: it refuses the np.intp its README shows.
        labels = np.zeros(len(plates), np.uintp)
        infos = self._tracker.update(boxes, scores, labels, self._sampled)
        matched = {self._id(info.uuid): index for index, info in enumerate(infos) if info is not None}
        active = [track.info for track in self._tracker.get_active_tracks()]
        # A track the update dropped is over: forgetting its uuid keeps the map as small as the tracks followed.
        self._ids = {info.uuid: self._ids[info.uuid] for info in active}
        followed = {self._ids[info.uuid] for info in active}
        confirmed = {self._ids[info.uuid] for info in active if info.count >= 2}
        return Step(matched, confirmed, followed)

    def _id(self, uuid: str) -> int:
        if uuid not in self._ids:
            self._ids[uuid] = self._next_id
            self._next_id += 1
        return self._ids[uuid]
