"""Real one-line plates restacked as two-line ones: real material for the two-line reader.

The labels hold thousands of real one-line plates and 4 real two-line ones. A private car's plate, `A 123 BC 77`,
carries the text of the type 1A plate `A123` over `BC77` (GOST R 50577: a letter and three digits over two letters
and the region), so a one-line plate parted after its fourth character, its parts stretched to one width and
stacked, is a type 1A plate made of real characters, dirt, blur and light. `benchmarks/rows_of_real_plates.py`
reads held-out ones; `convert/train_recognizer.py --stacked-cuts` trains on the train split's.
"""

from __future__ import annotations

import cv2
import numpy as np

TYPE_1A = 290 / 170  # width over height (mm)


def characters(plate: np.ndarray) -> list[tuple[int, int]]:
    """Left and right of each character-like blob of a one-line plate's pixels, left to right: the connected parts of
    its ink (darker than Otsu's threshold) a quarter of its height or more, at most a fifth of its width, and 0.6 to
    1.1 as tall as the tallest such part."""
    grey = cv2.cvtColor(plate, cv2.COLOR_BGR2GRAY)
    _, ink = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    height, width = grey.shape
    blobs = [
        (x, x + w, h)
        for x, _, w, h, _ in stats[1:count].tolist()
        if 0.25 * height <= h < 0.95 * height and 0.02 * width <= w <= 0.2 * width
    ]
    tallest = max((h for _, _, h in blobs), default=0)
    return sorted((left, right) for left, right, h in blobs if 0.6 * tallest <= h <= 1.1 * tallest)


def parting(plate: np.ndarray) -> int | None:
    """The column between a private plate's third digit and fifth character (A 123 | BC 77): the middle of the gap
    after its fourth character, where at least 6 characters are found and that gap is wider than the one before it
    (the standard sets the groups apart); None where the plate gives no such parting (dark plates, blur, glare: about
    six in ten of the real ones)."""
    if min(plate.shape[:2]) < 8:
        return None
    found = characters(plate)
    if len(found) < 6:
        return None
    gaps = [found[i + 1][0] - found[i][1] for i in range(len(found) - 1)]
    if gaps[3] <= max(0, gaps[2]):
        return None
    return (found[3][1] + found[4][0]) // 2


def as_type_1a(plate: np.ndarray) -> np.ndarray | None:
    """A one-line private plate's pixels (its box) as a type 1A plate: its parts either side of `parting` stretched
    to one width, stacked, and made 1A's shape; None where it cannot be parted."""
    column = parting(plate)
    if column is None:
        return None
    height = plate.shape[0]
    width = max(column, plate.shape[1] - column)
    top = cv2.resize(plate[:, :column], (width, height), interpolation=cv2.INTER_CUBIC)
    bottom = cv2.resize(plate[:, column:], (width, height), interpolation=cv2.INTER_CUBIC)
    stacked = np.concatenate([top, bottom], axis=0)
    return cv2.resize(stacked, (round(TYPE_1A * 2 * height), 2 * height), interpolation=cv2.INTER_CUBIC)
