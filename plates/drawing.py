"""Drawing plates on a photo: boxes, and the text above each one (or `?` where unread)."""

from __future__ import annotations

import cv2
import numpy as np

from plates.client import Plate

READ, UNREAD = (60, 200, 60), (0, 165, 255)  # BGR: green, orange


def draw_plates(image: np.ndarray, plates: list[Plate]) -> np.ndarray:
    """A copy of `image` with every plate's box and text drawn, scaled to the photo's size."""
    canvas = image.copy()
    scale = max(image.shape[:2]) / 1000
    thickness = max(1, round(2 * scale))
    for plate in plates:
        x1, y1, x2, y2 = (round(v) for v in plate.box)
        color = READ if plate.text else UNREAD
        cv2.rectangle(canvas, (x1, y1), (x2, y2), color, thickness)
        label = plate.text or "?"
        font_scale = max(0.4, 0.7 * scale)
        (width, height), baseline = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thickness)
        top = max(0, y1 - height - baseline - 2)
        cv2.rectangle(canvas, (x1, top), (x1 + width + 2, top + height + baseline + 2), color, cv2.FILLED)
        cv2.putText(
            canvas, label, (x1 + 1, top + height + 1), cv2.FONT_HERSHEY_SIMPLEX, font_scale, (0, 0, 0), thickness
        )
    return canvas
