"""Drawing plates on a photo: boxes, and the text above each one (or `?` where unread)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from plates.client.service import Plate
from plates.exceptions import OutputError

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


def make_folder(folder: Path) -> Path:
    """`folder`, created if need be; OutputError naming it and why it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError as error:
        raise OutputError(f"{folder}: cannot write drawings there: it is a file, not a folder") from error
    except OSError as error:
        raise OutputError(f"{folder}: cannot create the folder for drawings: {error.strerror}") from error
    return folder


def write_drawing(folder: Path, photo: str | Path, image: np.ndarray, plates: list[Plate]) -> Path:
    """Write `image` with its plates drawn to FOLDER/PHOTO-STEM.plates.jpg; OutputError naming the file if it
    cannot be written (cv2.imwrite would only return False)."""
    target = folder / f"{Path(photo).stem}.plates.jpg"
    encoded = cv2.imencode(".jpg", draw_plates(image, plates))[1]
    try:
        target.write_bytes(encoded.tobytes())
    except OSError as error:
        raise OutputError(f"{target}: cannot write the drawing: {error.strerror}") from error
    return target
