"""How far a plate is tilted in its box, and the size of the plate once levelled.

The detector's boxes are upright. A one-line plate tilted 20 degrees (a car on a slope, a camera rolled, a plate
hung askew) fills a box about 1.9 times as wide as tall where a level one fills 4.6, and its cut holds the plate as
a diagonal band with the car's body in two corners: the recognizer, trained on level plates, reads its characters
from rows that climb. Levelled first, such a plate is cut as the recognizer knows plates (plates.recognition.crops).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

PLATE_ASPECT = 520 / 112  # GOST R 50577's one-line plate, type 1: 520x112 mm
# Searched up to this many degrees beyond the tilt the box's shape allows (tilt_bound), which a plate's perspective,
# a loose box and the plate's own rim widen; and never beyond MOST_TILT, where the rows of a box's cut are mostly
# the background.
TILT_MARGIN = 5.0
MOST_TILT = 35.0
# The estimate is made on the cut shrunk to this many pixels on its longer side: a row's sum needs no more, and the
# search warps the cut once for each angle it tries (every COARSE_STEP degrees, then each degree near the best).
ESTIMATE_SIDE = 96
COARSE_STEP = 3


def tilt_bound(aspect: float, plate_aspect: float = PLATE_ASPECT) -> float:
    """The tilt in degrees of a plate `plate_aspect` times as wide as tall whose upright bounding box is `aspect`
    times as wide as tall: the most a one-line plate in such a box can be tilted (perspective only narrows it)."""
    if aspect >= plate_aspect:
        return 0.0
    return math.degrees(math.atan((plate_aspect - aspect) / (aspect * plate_aspect - 1)))


def plate_tilt(gray: np.ndarray, most: float = MOST_TILT) -> float:
    """The angle in degrees, counterclockwise as cv2.getRotationMatrix2D takes it, that levels the plate in `gray`
    (its box's cut, uint8 or float, H x W), within `most` either way, in whole degrees.

    A level plate's top and bottom edges and its characters' tops and bottoms are horizontal: the rows of its
    vertical gradient, summed along each row, peak there and are near zero between. The angle whose rotation makes
    those sums sharpest (the largest sum of their squares) is the one that levels it. Chosen over the sharpest rows
    of the plate's ink (Otsu's threshold) and of its horizontal gradient, which levelled as many real plates read by
    eye (docs/recognizer.md)."""
    image = gray.astype(np.float32)
    height, width = image.shape
    scale = ESTIMATE_SIDE / max(height, width)
    if scale < 1:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        height, width = image.shape
    edges = np.abs(cv2.Sobel(image, cv2.CV_32F, 0, 1, ksize=3))
    centre = (width / 2, height / 2)

    def sharpness(angle: int) -> float:
        turn = cv2.getRotationMatrix2D(centre, float(angle), 1.0)
        rows = cv2.warpAffine(edges, turn, (width, height), flags=cv2.INTER_LINEAR, borderValue=0).sum(axis=1)
        return float(np.dot(rows, rows))

    limit = int(min(most, MOST_TILT))
    # Every COARSE_STEP degrees, then each degree around the sharpest: the sharpness rises smoothly to its peak over
    # a few degrees either side, and a third of the warps find the same tilt.
    coarse = {angle: sharpness(angle) for angle in sorted(set(range(-limit, limit + 1, COARSE_STEP)) | {0, limit})}
    peak = max(coarse, key=lambda angle: (coarse[angle], -abs(angle)))
    near = range(max(-limit, peak - COARSE_STEP + 1), min(limit, peak + COARSE_STEP - 1) + 1)
    scores = coarse | {angle: sharpness(angle) for angle in near if angle not in coarse}
    # Ties go to the smaller tilt: a blank cut stays as it is.
    return float(max(scores, key=lambda angle: (scores[angle], -abs(angle))))


def levelled_size(width: float, height: float, angle: float) -> tuple[float, float] | None:
    """The width and height of a rectangle tilted by `angle` degrees whose upright bounding box is `width` x
    `height`, or None where no rectangle has that box (the box holds more than the plate: perspective, a loose box)
    or it would be a sliver of the box's height."""
    turn = math.radians(abs(angle))
    cos, sin = math.cos(turn), math.sin(turn)
    determinant = cos * cos - sin * sin
    if determinant <= 0:
        return None
    level_width = (width * cos - height * sin) / determinant
    level_height = (height * cos - width * sin) / determinant
    if level_width <= 0 or level_height < 0.2 * height:
        return None
    return level_width, level_height
