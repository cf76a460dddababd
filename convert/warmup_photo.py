"""Draw the photo the supervisor warms a fresh server with: plates/build/warmup_photo.jpg.

    python convert/warmup_photo.py

A plate (white, black border, "A123BC 77") on a grey 1280x720 frame, as a JPEG: the detector finds one plate in it,
so that warming runs every step a client's photo takes, decoding, crops and reading included, and at the shape a
16:9 camera frame (and car.jpg) takes in the detector. It is drawn rather than photographed so that the package
holds no one's car.
"""

from __future__ import annotations

import cv2
import numpy as np

from plates.build.warmup import PHOTO


def plate_photo() -> bytes:
    image = np.full((720, 1280, 3), 90, np.uint8)
    cv2.rectangle(image, (440, 500), (840, 590), (235, 235, 235), -1)
    cv2.rectangle(image, (440, 500), (840, 590), (20, 20, 20), 4)
    cv2.putText(image, "A123BC", (456, 574), cv2.FONT_HERSHEY_SIMPLEX, 2.2, (15, 15, 15), 6)
    cv2.putText(image, "77", (750, 560), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (15, 15, 15), 4)
    return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()


def main() -> None:
    PHOTO.write_bytes(plate_photo())
    print(f"wrote {PHOTO} ({PHOTO.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
