"""A track's readings, and the one event they make: the text voted over them, weighted by text_score."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from plates.client import Plate
from plates.recognition.regions import Region, region_of


@dataclass(frozen=True)
class Reading:
    """A plate as the service read it in one frame."""

    frame_index: int
    media_time: float
    wall_time: float
    plate: Plate


@dataclass(frozen=True)
class Event:
    source: str
    track: int
    text: str | None  # None where no frame of the track gave a valid plate
    text_score: float  # mean text_score of the readings of `text`
    region: Region | None
    first_seen: float  # media time, seconds
    last_seen: float
    first_seen_at: str  # wall-clock time, ISO 8601 UTC
    last_seen_at: str
    best_frame: int  # the frame of the reading of `text` with the highest text_score
    box: list[float]  # the plate's box in that frame
    readings: int  # frames the plate was read in

    def to_dict(self) -> dict:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["region"] = self.region.to_dict() if self.region else None
        return data

    def to_row(self) -> dict:
        """Flat, for CSV."""
        data = self.to_dict()
        data["region_code"] = self.region.code if self.region else ""
        data["region_name"] = self.region.name if self.region else ""
        del data["region"]
        data["box"] = " ".join(f"{v:g}" for v in self.box)
        return data


def vote(readings: list[Reading]) -> tuple[str | None, float, Reading]:
    """The text with the most summed text_score, its mean text_score, and its best reading."""
    weights: dict[str | None, float] = defaultdict(float)
    for reading in readings:
        if reading.plate.text:
            weights[reading.plate.text] += reading.plate.text_score
    text = max(weights, key=weights.__getitem__) if weights else None
    own = [r for r in readings if r.plate.text == text]
    best = max(own, key=lambda r: r.plate.text_score)  # the first of equals, as Track.add keeps its crop
    return text, sum(r.plate.text_score for r in own) / len(own), best


def _iso(wall_time: float) -> str:
    return datetime.fromtimestamp(wall_time, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Track:
    """The readings of one tracked plate, and the crop of the best reading of each text (for --save-crops)."""

    id: int
    readings: list[Reading] = field(default_factory=list)
    confirmed: bool = False  # the tracker reported it: seen in two frames (a one-frame detection is no plate)
    reported: bool = False  # its event went out (at --max-delay, before the track ended)
    crops: dict[str | None, np.ndarray] = field(default_factory=dict)

    def add(self, reading: Reading, crop: np.ndarray | None = None) -> None:
        text = reading.plate.text
        if crop is not None and all(
            r.plate.text_score < reading.plate.text_score for r in self.readings if r.plate.text == text
        ):
            self.crops[text] = crop
        self.readings.append(reading)

    def event(self, source: str) -> Event:
        text, text_score, best = vote(self.readings)
        first, last = self.readings[0], self.readings[-1]
        return Event(
            source=source,
            track=self.id,
            text=text,
            text_score=round(text_score, 4),
            region=region_of(text),
            first_seen=round(first.media_time, 3),
            last_seen=round(last.media_time, 3),
            first_seen_at=_iso(first.wall_time),
            last_seen_at=_iso(last.wall_time),
            best_frame=best.frame_index,
            box=best.plate.box,
            readings=len(self.readings),
        )

    def best_crop(self) -> np.ndarray | None:
        return self.crops.get(vote(self.readings)[0])


def crop_plate(image: np.ndarray, box: list[float]) -> np.ndarray:
    """The plate's box cut out of the frame, clipped to it."""
    height, width = image.shape[:2]
    x1, y1 = max(0, int(box[0])), max(0, int(box[1]))
    x2, y2 = min(width, int(np.ceil(box[2]))), min(height, int(np.ceil(box[3])))
    return image[y1:y2, x1:x2].copy()
