"""Which ways each plate is read, and which reading stands.

A two-class detector says which plates have two rows (class 1); the committed detector finds plates of one class.
The box's shape then says which may have two: a square car plate (type 1A, 290x170 mm), a motorcycle's (190x145;
245x160 before 2018) or a tractor's is 1.3 to 1.7 times as wide as tall, a one-line plate 4.6, and under 2.5 only
when seen from the side or boxed loosely. A one-class detector boxes a two-line plate as it would a one-line plate
(it learnt no other): often one row only, the bottom one with the region or the top one. So a box less than
`two_line_aspect` times as wide as tall is read as one row, and as two rows from the box grown upward and grown
downward to a two-line plate's shape (TWO_LINE_SHAPE), and the likeliest reading stands, with its box. The grammar
cannot choose for it: a square plate's text has a one-line plate's format.

A one-line plate whose box is less than `level_below` times as wide as tall is tilted, or seen from aside: where its
cut shows a tilt (plates.recognition.crops.box_tilts), it is read as boxed and levelled, and the likelier reading
stands. Levelled alone, a plate the estimate tilted wrongly (a close-up in perspective, a blank plate) lost its
reading; read both ways, none did (docs/recognizer.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from plates.recognition.ctc import Reading

TWO_LINE_SHAPE = 1.6  # width over height: type 1A 1.7, motorcycles' 1.3 and 1.5, tractors' 1.5


@dataclass(frozen=True)
class Ways:
    """Every way to read the plates of a photo, plate by plate: the plate each reads (an index into the detector's
    boxes), its rows (1 or 2), the box it cuts ([N, 4] x1 y1 x2 y2) and the tilt it levels the plate by (degrees; 0:
    cut upright)."""

    plate_of: np.ndarray
    rows: np.ndarray
    boxes: np.ndarray
    tilts: np.ndarray


def grown(box: Sequence[float], upward: bool, height: float) -> tuple[float, float, float, float]:
    """`box` (x1 y1 x2 y2) grown upward or downward to TWO_LINE_SHAPE, within a photo `height` tall; as it is where
    it is already that square."""
    x1, y1, x2, y2 = (float(v) for v in box)
    missing = max(0.0, (x2 - x1) / TWO_LINE_SHAPE - (y2 - y1))
    return (x1, max(0.0, y1 - missing), x2, y2) if upward else (x1, y1, x2, min(float(height), y2 + missing))


def ways_to_read(
    boxes: np.ndarray, lines: np.ndarray, two_line_aspect: float, height: int, tilts: Sequence[float] | None = None
) -> Ways:
    """Every plate as its `lines` say; a one-line plate of a nonzero tilt in `tilts` (None: none) also levelled by
    it; and one whose box is less than `two_line_aspect` times as wide as tall (0: none) also as two rows, from its
    box grown upward and grown downward within the photo `height` tall (a box already that square, once, as it is)."""
    ways: list[tuple[int, int, Sequence[float], float]] = []
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    tilts = np.zeros(len(boxes), np.float32) if tilts is None else np.asarray(tilts, np.float32)
    for plate, (box, count, tilt) in enumerate(zip(boxes, np.asarray(lines), tilts)):
        ways.append((plate, int(count), box, 0.0))
        if count == 1 and tilt:
            ways.append((plate, 1, box, float(tilt)))
        if count == 1 and box[2] - box[0] < two_line_aspect * (box[3] - box[1]):
            grown_ways = dict.fromkeys(grown(box, upward, height) for upward in (True, False))
            ways += [(plate, 2, way, 0.0) for way in grown_ways]
    plate_of, rows, cut, tilt_of = zip(*ways) if ways else ((), (), (), ())
    return Ways(
        np.asarray(plate_of, np.int64),
        np.asarray(rows, np.int64),
        np.asarray(cut, np.float32).reshape(-1, 4),
        np.asarray(tilt_of, np.float32),
    )


def likeliest(readings: Sequence[Reading], plate_of: Sequence[int]) -> list[int]:
    """For each plate, in order, the index of its likeliest reading of those ways_to_read asked for (`plate_of`: each
    reading's plate), the first one where they tie, as a plate read one way has."""
    best: dict[int, int] = {}
    for index, (reading, plate) in enumerate(zip(readings, plate_of)):
        chosen = best.get(int(plate))
        if chosen is None or reading.confidence > readings[chosen].confidence:
            best[int(plate)] = index
    if sorted(best) != list(range(len(best))) or len(readings) != len(plate_of):
        raise ValueError(
            f"readings of plates {sorted(best)} from {len(readings)} readings of {len(plate_of)}: "
            "every plate from 0 on must have one"
        )
    return [best[plate] for plate in range(len(best))]
