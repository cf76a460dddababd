"""A track's readings, and the one event they make: the text voted over them, each reading's candidates counted
with their probabilities."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from plates.client.service import Plate
from plates.recognition.regions import Region, region_of
from plates.watch.watchlist import Match


@dataclass(frozen=True)
class Reading:
    """A plate as the service read it in one frame."""

    frame_index: int
    media_time: float
    wall_time: float
    plate: Plate


CANDIDATES = 5  # the texts an event keeps from its vote, for watchlist matching and for its readers
# A plate whose box grew by this factor in area from its first reading to its last came towards the camera; one that
# shrank as much went away. Between the two the track says nothing (a car that stopped, a box that wavered).
MOTION_AREA_RATIO = 1.3


@dataclass(frozen=True)
class Event:
    source: str
    camera_id: str
    track: int
    text: str | None  # None where no frame of the track gave a valid plate
    text_score: float  # mean probability of `text` over the readings that were read
    region: Region | None
    first_seen: float  # media time, seconds
    last_seen: float
    first_seen_at: str  # wall-clock time, ISO 8601 UTC
    last_seen_at: str
    best_frame: int  # the frame of the reading that gave `text` the highest probability
    box: list[float]  # the plate's box in that frame
    readings: int  # frames the plate was read in
    # The likeliest texts of the vote, best first, each with its mean probability over the readings that were read
    candidates: list[tuple[str, float]] = field(default_factory=list)
    watched: Match | None = None  # the watched plate it matched (plates.watch.watchlist)
    motion: str | None = None  # "towards" or "away" from the camera, where the plate's box grew or shrank

    def to_dict(self) -> dict:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["region"] = self.region.to_dict() if self.region else None
        data["candidates"] = [{"text": text, "score": score} for text, score in self.candidates]
        data["watched"] = self.watched.to_dict() if self.watched else None
        return data

    def to_row(self) -> dict:
        """Flat, for CSV."""
        data = self.to_dict()
        data["region_code"] = self.region.code if self.region else ""
        data["region_name"] = self.region.name if self.region else ""
        del data["region"], data["candidates"], data["watched"]
        data["box"] = " ".join(f"{v:g}" for v in self.box)
        data["watched_plate"] = self.watched.plate if self.watched else ""
        data["watched_label"] = self.watched.label if self.watched else ""
        data["watched_distance"] = self.watched.distance if self.watched else ""
        return data


def beliefs(plate: Plate) -> list[tuple[str, float]]:
    """The texts a reading gives probability to: its candidates (its text first), or its text alone where the
    server sent none; nothing for a plate the server did not read, whose candidates it judged phantoms."""
    if not plate.text:
        return []
    return plate.candidates or [(plate.text, plate.text_score)]


def vote_totals(readings: list[Reading]) -> dict[str, float]:
    """Each text's probability summed over the candidates of the readings that were read."""
    totals: dict[str, float] = defaultdict(float)
    for reading in readings:
        for text, probability in beliefs(reading.plate):
            totals[text] += probability
    return totals


def vote(readings: list[Reading]) -> tuple[str | None, float, Reading]:
    """The text with the most probability summed over the readings' candidates, its mean probability over the
    readings that were read, and the reading that gave it the most.

    Summing every candidate, not only each reading's text, keeps what the recognizer believed in frames where a
    close call went the other way: in the test video car.jpg's plate is read right in 1 frame of 6 (O for C in 3,
    117 for 197 in 3), yet the right text is a candidate in 5 of them and sums to the most (README: Cameras and
    video).
    """
    read = [r for r in readings if r.plate.text]
    totals = vote_totals(read)
    if not totals:
        return None, 0.0, max(readings, key=lambda r: r.plate.text_score)
    text = max(totals, key=totals.__getitem__)
    # The first of equals, as Track.add keeps its crop.
    best = max(read, key=lambda r: dict(beliefs(r.plate)).get(text, 0.0))
    return text, totals[text] / len(read), best


def _area(box: list[float]) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def motion(readings: list[Reading]) -> str | None:
    """Towards or away from the camera, from the plate's size in its first and last readings."""
    first, last = _area(readings[0].plate.box), _area(readings[-1].plate.box)
    if first > 0 and last >= first * MOTION_AREA_RATIO:
        return "towards"
    if last > 0 and first >= last * MOTION_AREA_RATIO:
        return "away"
    return None


def _iso(wall_time: float) -> str:
    return datetime.fromtimestamp(wall_time, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Track:
    """The readings of one tracked plate, and for each text the crop of the reading that gave it the most
    probability (for --save-crops)."""

    id: int
    readings: list[Reading] = field(default_factory=list)
    confirmed: bool = False  # the tracker reported it: seen in two frames (a one-frame detection is no plate)
    reported: bool = False  # its event went out (at --max-delay, before the track ended)
    crops: dict[str | None, np.ndarray] = field(default_factory=dict)
    crop_scores: dict[str | None, float] = field(default_factory=dict)  # the probability each crop gave its text

    def add(self, reading: Reading, crop: np.ndarray | None = None) -> None:
        if crop is not None:
            # Every text the reading believes in may win the vote, so each keeps the crop of its likeliest reading.
            for text, probability in beliefs(reading.plate) or [(None, reading.plate.text_score)]:
                if probability > self.crop_scores.get(text, -1.0):
                    self.crops[text], self.crop_scores[text] = crop, probability
        self.readings.append(reading)

    def event(self, source: str, camera_id: str) -> Event:
        text, text_score, best = vote(self.readings)
        first, last = self.readings[0], self.readings[-1]
        read = [r for r in self.readings if r.plate.text]
        totals = sorted(vote_totals(read).items(), key=lambda item: -item[1])[:CANDIDATES]
        return Event(
            source=source,
            camera_id=camera_id,
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
            candidates=[(candidate, round(total / len(read), 4)) for candidate, total in totals],
            motion=motion(self.readings),
        )

    def best_crop(self) -> np.ndarray | None:
        return self.crops.get(vote(self.readings)[0])


def crop_plate(image: np.ndarray, box: list[float]) -> np.ndarray:
    """The plate's box cut out of the frame, clipped to it."""
    height, width = image.shape[:2]
    x1, y1 = max(0, int(box[0])), max(0, int(box[1]))
    x2, y2 = min(width, int(np.ceil(box[2]))), min(height, int(np.ceil(box[3])))
    return image[y1:y2, x1:x2].copy()
