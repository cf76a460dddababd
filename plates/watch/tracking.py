"""Following plates from frame to frame with Ultralytics' ByteTrack or BoT-SORT (docs/performance.md, Tracking)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plates.client.service import Plate

TRACKERS = ("bytetrack", "botsort")


@dataclass(frozen=True)
class Detections:
    """Plates as the Ultralytics trackers take a frame's detections (the fields of their `Boxes` they read)."""

    xyxy: np.ndarray
    conf: np.ndarray
    # The trackers number detections within their score-filtered subsets, so the index of each plate in the frame
    # travels as its class instead (plates have one class; ByteTrack and BoT-SORT only carry it along).
    cls: np.ndarray

    @classmethod
    def of(cls, plates: list[Plate]) -> Detections:
        boxes = np.array([p.box for p in plates], dtype=np.float32).reshape(-1, 4)
        return cls(boxes, np.array([p.score for p in plates], np.float32), np.arange(len(plates), dtype=np.float32))

    @property
    def xywh(self) -> np.ndarray:
        xywh = self.xyxy.copy()
        xywh[:, :2] = (self.xyxy[:, :2] + self.xyxy[:, 2:]) / 2
        xywh[:, 2:] = self.xyxy[:, 2:] - self.xyxy[:, :2]
        return xywh

    def __len__(self) -> int:
        return len(self.conf)

    def __getitem__(self, index) -> Detections:
        return Detections(self.xyxy[index], self.conf[index], self.cls[index])


@dataclass(frozen=True)
class Step:
    """What one frame did to the tracks."""

    matched: dict[int, int]  # track id -> index of the plate in the frame that continues or starts it
    confirmed: set[int]  # ids of tracks the tracker reports (seen in two frames, or in the first frame)
    followed: set[int]  # ids of every track the tracker still follows, seen this frame or lost a while


class PlateTracker:
    """`step(plates)` per sampled frame, in order; a track is over once its id leaves `Step.followed`."""

    def __init__(self, kind: str = "bytetrack", fps: float = 5.0, lost_after: float = 1.0) -> None:
        from ultralytics.trackers import BOTSORT, BYTETracker
        from ultralytics.trackers.basetrack import TrackState
        from ultralytics.utils import YAML, IterableSimpleNamespace
        from ultralytics.utils.checks import check_yaml

        if kind not in TRACKERS:
            raise ValueError(f"tracker must be one of {', '.join(TRACKERS)}, got {kind!r}")
        args = IterableSimpleNamespace(**YAML.load(check_yaml(f"{kind}.yaml")))
        # The trackers count patience in frames at 30 fps: at frame_rate 30, `track_buffer` is the frames a lost
        # track is kept, here the sampled frames in `lost_after` seconds.
        args.track_buffer = max(1, round(lost_after * fps))
        # Matching on IoU alone: fusing in the detector's score (0.5 to 0.7 for plates) cuts the similarity of a
        # small plate that moved between two sampled frames below the match threshold (docs/performance.md, Tracking).
        args.fuse_score = False
        if kind == "botsort":
            args.with_reid = False
        self._tracker = (BOTSORT if kind == "botsort" else BYTETracker)(args, frame_rate=30)
        self.kind, self.fps, self._removed = kind, fps, TrackState.Removed

    def step(self, plates: list[Plate], image: np.ndarray | None = None, sampled: int | None = None) -> Step:
        """Feed one frame's plates (and the frame, which BoT-SORT uses to follow the camera's motion).

        `sampled` is the frame's place among the sampled frames (its media time times fps). A live camera skips
        the frames that come while the service is busy; counting them keeps a lost track's patience at
        `lost_after` seconds instead of `lost_after * fps` frames read, which on a busy service is several times
        longer and holds every alert back as long.
        """
        tracker = self._tracker
        if sampled is not None:
            tracker.frame_id = max(tracker.frame_id, sampled)  # update() counts on from here: sampled + 1
        reported = tracker.update(Detections.of(plates), image)
        matched = {
            int(track.track_id): int(track.cls)
            for track in tracker.tracked_stracks
            if track.frame_id == tracker.frame_id
        }
        confirmed = {int(row[4]) for row in reported}
        # A track removed by this update stays in lost_stracks until the next: it is over now.
        followed = {int(t.track_id) for t in tracker.tracked_stracks + tracker.lost_stracks if t.state != self._removed}
        return Step(matched, confirmed, followed)
