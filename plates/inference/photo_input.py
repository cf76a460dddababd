"""The photo a request carries: exactly one of `input__0` (HWC BGR uint8 pixels) and `image_bytes` (one JPEG or PNG
file, as stored).

plate_recognition checks the photo as far as it can without decoding it (plates.inference.pipeline.recognize) and
hands it to yolo as it came; yolo, the model that needs the pixels, decodes a file on its own instance's device. So
a file crosses from model to model as the file, not as its decoded pixels: 0.4 MB rather than 6.2 MB for a
1920x1080 JPEG frame.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from plates.exceptions import InvalidInputError
from plates.inference.photo_decoding import decode_image
from plates.photos.pixels import check_image_layout

PIXELS = "input__0"
FILE = "image_bytes"

# A photo as the models pass it on: {PIXELS: the pixels} or {FILE: an array of the one file's bytes}.
Photo = Mapping[str, "torch.Tensor | np.ndarray"]


def photo_input(pixels: torch.Tensor | None, encoded: np.ndarray | None) -> dict[str, torch.Tensor | np.ndarray]:
    """The photo of a request holding `pixels` (its input__0) or `encoded` (its image_bytes): exactly one of them,
    pixels shaped as a photo, one file; InvalidInputError naming what is wrong otherwise. The file's content is
    checked where it is read (plates.photos.decoding)."""
    if (pixels is None) == (encoded is None):
        given = "neither" if pixels is None else "both"
        raise InvalidInputError(
            f"send exactly one of {PIXELS} (HWC BGR pixels) and {FILE} (a JPEG or PNG file), got {given}"
        )
    if pixels is not None:
        check_image_layout(tuple(pixels.shape), str(pixels.dtype).removeprefix("torch."), PIXELS)
        return {PIXELS: pixels}
    if encoded.size != 1:
        raise InvalidInputError(f"{FILE} must hold one encoded photo, got {encoded.size}")
    encoded = encoded.reshape(1)
    if not isinstance(encoded[0], bytes):
        raise InvalidInputError(f"{FILE} must be BYTES, got {encoded.dtype}")
    return {FILE: encoded}


def photo_pixels(photo: Photo, device: torch.device) -> torch.Tensor:
    """A photo's pixels, HWC BGR uint8: a file decoded on `device` (InvalidInputError naming image_bytes and the
    fault where it is no photo), pixels as they are."""
    if FILE in photo:
        return decode_image(photo[FILE][0], device, FILE)
    return photo[PIXELS]
