"""Watched plates: which events are alerts, matched exactly or within an edit distance over the plate's candidates.

A watchlist is a list of plates with labels, from the site file or from a file of lines `A505PO198 delivery`. The
file is read again when it changes, so a site adds a plate without a restart; an edit that breaks it is logged
and the last good list kept.

The distance is plates.recognition.edits.plate_distance: Levenshtein's, where replacing a character by one that looks
like it on a plate (0 and O, 8 and B, ...) costs less than 1, since that is the mistake a small or blurred plate makes
most (the test video's plate is read with O for C in half its frames, plates/watch/events.py).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from plates.exceptions import SettingsError
from plates.recognition.alphabet import ALPHABET
from plates.recognition.edits import normalize_plate, plate_distance

log = logging.getLogger(__name__)

PLATE = re.compile(f"[{ALPHABET}]{{4,10}}")


@dataclass(frozen=True)
class WatchedPlate:
    plate: str
    label: str


@dataclass(frozen=True)
class Match:
    plate: str  # as on the watchlist
    label: str
    distance: float  # 0 for an exact match
    text: str  # the candidate of the event's plate that matched

    def to_dict(self) -> dict:
        return {"plate": self.plate, "label": self.label, "distance": self.distance}


def parse_entry(plate: str, label: str, where: str) -> WatchedPlate:
    normalized = normalize_plate(plate)
    if not PLATE.fullmatch(normalized):
        raise SettingsError(
            f"{where}: {plate!r} is not a plate (4 to 10 of the digits and the letters {ALPHABET[10:]})"
        )
    return WatchedPlate(normalized, label.strip())


def parse_lines(text: str, origin: str) -> list[WatchedPlate]:
    """Lines `PLATE [label...]`; blank lines and `#` comments skipped. Errors name `origin` and the line."""
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if line:
            plate, _, label = line.partition(" ")
            entries.append(parse_entry(plate, label, f"{origin}, line {number}"))
    return entries


class Watchlist:
    """`match(candidates)`: the watched plate nearest to any of a plate's candidate texts, if within
    `max_distance`; the nearest first, then the likelier candidate."""

    def __init__(self, entries: Iterable[WatchedPlate], max_distance: float = 0.0) -> None:
        if max_distance < 0:
            raise SettingsError(f"the watchlist's max distance must be 0 or more, got {max_distance}")
        self.entries, self.max_distance = list(entries), max_distance

    def match(self, candidates: Iterable[str]) -> Match | None:
        best: Match | None = None
        for text in candidates:
            for entry in self.entries:
                distance = plate_distance(text, entry.plate)
                if distance <= self.max_distance and (best is None or distance < best.distance):
                    best = Match(entry.plate, entry.label, distance, text)
        return best


class WatchlistFile:
    """A watchlist read from `path`, read again at a match once its modification time or size changed.

    A file that breaks after it was first read is logged and its last good list kept: an operator's typo must not
    stop alerts, nor the watcher.
    """

    def __init__(self, path: Path, max_distance: float = 0.0) -> None:
        self.path, self.max_distance = path, max_distance
        self._lock = threading.Lock()
        self._stamp = self._stat()
        self.watchlist = Watchlist(self._read(), max_distance)

    def _stat(self) -> tuple[int, int] | None:
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def _read(self) -> list[WatchedPlate]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise SettingsError(f"--watchlist {self.path}: cannot read it: {error}") from error
        return parse_lines(text, f"--watchlist {self.path}")

    def match(self, candidates: Iterable[str]) -> Match | None:
        with self._lock:
            stamp = self._stat()
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    self.watchlist = Watchlist(self._read(), self.max_distance)
                    log.warning("%s: read again, %d plates watched", self.path, len(self.watchlist.entries))
                except SettingsError as error:
                    log.warning("%s; keeping the %d plates read before", error, len(self.watchlist.entries))
            watchlist = self.watchlist
        return watchlist.match(candidates)
