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
        self._lifespan = max(1, round(lost_after * fps))
        self._sampled = -1
        self._ids: dict[str, int] = {}  # the uuid of each track followed -> its number in events
        self._next_id = 1
        # Each of our tracks' boxes by the sampled frame they were seen in (the last two), and how many frames it was
        # matched in: what continues a plate that moved too far for ByteTrack's overlap.
        self._seen: dict[int, list[tuple[int, list[float]]]] = {}
        self._matches: dict[int, int] = {}

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
        known = set(self._ids.values())
        matched = {self._id(info.uuid): index for index, info in enumerate(infos) if info is not None}
        self._continue_far_moves(matched, known, plates)
        for track_id, index in matched.items():
            self._seen[track_id] = (self._seen.get(track_id, []) + [(self._sampled, plates[index].box)])[-2:]
            self._matches[track_id] = self._matches.get(track_id, 0) + 1
        active = [track.info for track in self._tracker.get_active_tracks()]
        # A track the update dropped is over: forgetting its uuid keeps the map as small as the tracks followed.
        self._ids = {info.uuid: self._ids[info.uuid] for info in active if info.uuid in self._ids}
        followed = set(self._ids.values())
        self._seen = {track_id: seen for track_id, seen in self._seen.items() if track_id in followed}
        self._matches = {track_id: count for track_id, count in self._matches.items() if track_id in followed}
        confirmed = {track_id for track_id, count in self._matches.items() if count >= 2}
        return Step(matched, confirmed, followed)

    def _continue_far_moves(self, matched: dict[int, int], known: set[int], plates: list[Plate]) -> None:
        """A plate that moved more than its size between two sampled frames (a car leaving a checkpoint camera at 30
        km/h, sampled at 5 fps, moves 20 px up while its 24-px-tall plate shrinks) overlaps nothing of its track, and
        ByteTrack starts a new one: one car, a new track each frame, none seen twice, no event. Such a new track
        continues the track, unmatched this frame and seen within `lost_after`, whose box it is near: its centre within
        a plate's width of where the track's last two boxes say the plate is now (two of its last box, after one), its
        size within a factor of 2. Two cars side by side stand more than three plate widths apart."""
        new = {track_id: index for track_id, index in matched.items() if track_id not in known}
        waiting = [
            track_id
            for track_id in known - set(matched)
            if track_id in self._seen and self._sampled - self._seen[track_id][-1][0] <= self._lifespan
        ]
        for new_id, index in sorted(new.items()):
            box = plates[index].box
            near = [(self._gap(track_id, box), track_id) for track_id in waiting]
            near = [(gap, track_id) for gap, track_id in near if gap is not None]
            if not near:
                continue
            _, track_id = min(near)
            waiting.remove(track_id)
            del matched[new_id]
            matched[track_id] = index
            # The new track's uuid is our old number from now on.
            for uuid, number in self._ids.items():
                if number == new_id:
                    self._ids[uuid] = track_id

    def _gap(self, track_id: int, box: list[float]) -> float | None:
        """How far `box` is from where track `track_id`'s plate should be now, in plate widths; None if too far."""
        seen = self._seen[track_id]
        frame, last = seen[-1]
        centre = np.array([(last[0] + last[2]) / 2, (last[1] + last[3]) / 2])
        if len(seen) == 2:
            (before_frame, before), steps = seen[0], self._sampled - frame
            velocity = (centre - [(before[0] + before[2]) / 2, (before[1] + before[3]) / 2]) / (frame - before_frame)
            centre = centre + velocity * steps
        width = max(last[2] - last[0], box[2] - box[0], 1.0)
        ratio = (box[2] - box[0]) / max(last[2] - last[0], 1.0)
        gap = float(np.hypot(*(centre - [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2]))) / width
        # Where the last two boxes give a velocity the plate is looked for within a width of where it should be; after
        # one box, anywhere within two widths of it.
        reach = 1.0 if len(seen) == 2 else 2.0
        return gap if gap <= reach and 0.5 <= ratio <= 2.0 else None

    def _id(self, uuid: str) -> int:
        if uuid not in self._ids:
            self._ids[uuid] = self._next_id
            self._next_id += 1
        return self._ids[uuid]
