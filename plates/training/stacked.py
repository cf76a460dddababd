"""Real one-line plates restacked as two-line ones: real material for the two-line reader.

The labels hold thousands of real one-line plates and 4 real two-line ones. A private car's plate, `A 123 BC 77`,
carries the text of the type 1A plate `A123` over `BC77` (GOST R 50577: a letter and three digits over two letters
and the region), so a one-line plate parted after its fourth character, its parts stretched to one width and
stacked, is a type 1A plate made of real characters, dirt, blur and light. The same plate with its letter's columns
given to one of its own digits is a motorcycle's or tractor's (types 4 and 3: four digits over two letters and the
region, `1123` over `BC77`), the layout where a reader that knows only type 1A reads a first digit 8 as B.
`benchmarks/rows_of_real_plates.py` reads held-out ones; `convert/train_recognizer.py --stacked-cuts` trains on the
train split's.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

TYPE_1A = 290 / 170  # width over height (mm)
# Four digits over two letters: type 4 (motorcycles) 190x145 mm since GOST R 50577-2018; 245x160 mm before it, and
# type 3 (tractors).
FOUR_DIGIT_SHAPES = (190 / 145, 245 / 160)
KINDS = ("type 1A", "four digits")

Blob = tuple[int, int, int]  # a character's left and right column, and its height


def characters(plate: np.ndarray) -> list[Blob]:
    """Left, right and height of each character-like blob of a one-line plate's pixels, left to right: the connected
    parts of its ink (darker than Otsu's threshold) a quarter of its height or more, at most a fifth of its width, and
    0.6 to 1.1 as tall as the tallest such part."""
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
    return sorted(blob for blob in blobs if 0.6 * tallest <= blob[2] <= 1.1 * tallest)


def parting(plate: np.ndarray) -> tuple[list[Blob], int] | None:
    """A private plate's characters, and the column between its third digit and fifth character (A 123 | BC 77): the
    middle of the gap after its fourth character, where at least 6 characters are found, that gap is wider than the one
    before it (the standard sets the groups apart) and the first, fifth and sixth are shorter than the three between
    (letters are 58 mm tall, digits 76: a blob of the rim, a screw or a character missed would put the parting
    elsewhere); None where the plate gives no such parting (dark plates, blur, glare: about six in ten of the real
    ones)."""
    if min(plate.shape[:2]) < 8:
        return None
    found = characters(plate)
    if len(found) < 6:
        return None
    gaps = [found[i + 1][0] - found[i][1] for i in range(len(found) - 1)]
    letters, digits = [found[i][2] for i in (0, 4, 5)], [found[i][2] for i in (1, 2, 3)]
    if gaps[3] <= max(0, gaps[2]) or max(letters) >= min(digits):
        return None
    return found, (found[3][1] + found[4][0]) // 2


def _stacked(top: np.ndarray, bottom: np.ndarray, shape: float) -> np.ndarray:
    """Two rows of one height stretched to one width, the first over the second, made `shape` (width over height)."""
    height = top.shape[0]
    width = max(top.shape[1], bottom.shape[1])
    rows = [cv2.resize(row, (width, height), interpolation=cv2.INTER_CUBIC) for row in (top, bottom)]
    stacked = np.concatenate(rows, axis=0)
    return cv2.resize(stacked, (round(shape * 2 * height), 2 * height), interpolation=cv2.INTER_CUBIC)


def _columns(found: list[Blob], index: int) -> tuple[int, int]:
    """The columns character `index` holds: from the middle of the gap before it to the middle of the gap after it
    (the first one as far to its left as its gap to the right)."""
    after = (found[index][1] + found[index + 1][0]) // 2
    if index == 0:
        return max(0, found[0][0] - (after - found[0][1])), after
    return (found[index - 1][1] + found[index][0]) // 2, after


@dataclass(frozen=True)
class Stack:
    kind: str  # of KINDS
    pixels: np.ndarray  # BGR, the two-line plate's whole face
    text: str  # top row, bottom row, region


def restacked(plate: np.ndarray, text: str, rng: np.random.Generator) -> list[Stack]:
    """The two-line plates a one-line private plate's pixels (its box) of `text` make, one of each of KINDS; none
    where it cannot be parted. Type 1A: its parts either side of `parting` stretched to one width, stacked, and made
    1A's shape. Four digits over two letters (1123 / BC 77): the same with its letter's columns given to one of its
    digits' columns, at their own width (stretched to the letter's, a 0 is an O), in one of FOUR_DIGIT_SHAPES (both
    drawn from `rng`)."""
    first = int(rng.integers(3))
    shape = FOUR_DIGIT_SHAPES[int(rng.integers(len(FOUR_DIGIT_SHAPES)))]
    parted = parting(plate)
    if parted is None:
        return []
    found, column = parted
    left, right = _columns(found, 0)
    start, stop = _columns(found, 1 + first)
    four_digits = np.concatenate([plate[:, :left], plate[:, start:stop], plate[:, right:column]], axis=1)
    bottom = plate[:, column:]
    return [
        Stack(KINDS[0], _stacked(plate[:, :column], bottom, TYPE_1A), text),
        Stack(KINDS[1], _stacked(four_digits, bottom, shape), text[1 + first] + text[1:]),
    ]
