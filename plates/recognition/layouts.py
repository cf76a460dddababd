"""Which ways each plate is read, and which reading stands.

A two-class detector says which plates have two rows (class 1); the committed detector finds plates of one class.
The box's shape then says which may have two: a square car plate (type 1A, 290x170 mm), a motorcycle's (190x145;
245x160 before 2018) or a tractor's is 1.3 to 1.7 times as wide as tall, a one-line plate 4.6, and under 2.5 only
when seen from the side or boxed loosely. So a box less than `two_line_aspect` times as wide as tall is read both
ways, as one row and as two, and the likelier reading stands. The grammar cannot choose for it: a square plate's
text has a one-line plate's format.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from plates.recognition.ctc import Reading


def ways_to_read(boxes: np.ndarray, lines: np.ndarray, two_line_aspect: float) -> tuple[np.ndarray, np.ndarray]:
    """Each reading's plate (an index into `boxes`, [N, 4] x1 y1 x2 y2) and rows: every plate as its `lines` say,
    plate by plate, and a one-line plate whose box is less than `two_line_aspect` times as wide as tall read again
    right after, as two rows (0: never)."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    lines = np.asarray(lines, np.int64).reshape(-1)
    squarish = (lines == 1) & (boxes[:, 2] - boxes[:, 0] < two_line_aspect * (boxes[:, 3] - boxes[:, 1]))
    plate_of = np.repeat(np.arange(len(boxes)), 1 + squarish.astype(np.int64))
    rows = lines[plate_of]
    rows[1:][plate_of[1:] == plate_of[:-1]] = 2
    return plate_of, rows


def likeliest(readings: Sequence[Reading], plate_of: Sequence[int], plates: int) -> list[Reading]:
    """Each of `plates` plates' likeliest reading of those ways_to_read asked for (`plate_of`: each reading's plate),
    the first one where they tie, as a plate read one way has."""
    best: list[Reading | None] = [None] * plates
    for reading, plate in zip(readings, plate_of):
        chosen = best[plate]
        if chosen is None or reading.confidence > chosen.confidence:
            best[plate] = reading
    if any(reading is None for reading in best):
        raise ValueError(f"readings of plates {sorted(set(int(p) for p in plate_of))} leave some of {plates} unread")
    return best  # type: ignore[return-value]
