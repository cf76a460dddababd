"""Encoded photos (JPEG, PNG) to the pixels the service takes: HWC BGR uint8, on the host.

One function, `decode_pixels`, serves the client (to send raw pixels or to draw) and the server on the CPU
(plates.inference.photo_decoding, which decodes on a GPU with nvJPEG), so both see the same pixels and refuse the
same files. The header is read first, so a photo that claims to be too large, or is not JPEG or PNG, is refused
before any pixel is decoded; a JPEG that stops before its end-of-image marker is refused as truncated.

A JPEG is decoded by simplejpeg (libjpeg-turbo) in strict mode: what libjpeg reports as corrupt data (a photo cut
short with an end-of-image marker appended, random bytes in its middle) is an error, where `cv2.imdecode` only prints
libjpeg's warning and returns the damaged photo as if it were whole. It gives BGR directly, the same pixels as
`cv2.imread`, in 4.3 ms for a 1920x1080 frame (docs/performance.md). A PNG is decoded by Pillow after checking every
chunk's CRC, as libpng does: a PNG cut short or damaged is an error, where `cv2.imdecode` returns half a photo.
Neither needs PyTorch: a client-side install has none.
"""

from __future__ import annotations

import io

import numpy as np
import simplejpeg
from PIL import Image

from plates.exceptions import InvalidInputError
from plates.photos.headers import read_header


def decode_pixels(data: bytes, what: str = "image") -> np.ndarray:
    """`data`, a JPEG or PNG file's bytes, as HWC BGR uint8 pixels, turned upright as its EXIF says (as `cv2.imread`
    does). InvalidInputError naming `what` and the fault for anything else."""
    header = read_header(data, what)
    if header.format == "JPEG":
        try:
            pixels = simplejpeg.decode_jpeg(data, colorspace="BGR", strict=True)
        except ValueError as error:
            raise InvalidInputError(f"{what} is a corrupt or truncated JPEG: {error}") from error
    else:
        pixels = decode_png(data, what)
    return upright(pixels, header.orientation)


def decode_png(data: bytes, what: str) -> np.ndarray:
    """A PNG's pixels as HWC BGR uint8: grey, palette and alpha made three channels, 16 bits their high byte (as
    `cv2.imread` gives them)."""
    try:
        with Image.open(io.BytesIO(data)) as checked:
            checked.verify()  # every chunk's CRC: load() alone reads past a damaged IDAT's
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            if image.mode.startswith("I"):  # 16-bit grey
                grey = (np.asarray(image).astype(np.uint32) >> 8).astype(np.uint8)
                return np.ascontiguousarray(np.repeat(grey[:, :, None], 3, axis=2))
            return np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])
    except (OSError, SyntaxError, ValueError) as error:  # Pillow's errors for damaged and truncated files
        raise InvalidInputError(f"{what} is a corrupt or truncated PNG: {error}") from error


def upright_steps(orientation: int) -> tuple[bool, bool, bool]:
    """How a photo stored with EXIF `orientation` (1-8) is turned as it is meant to be seen: (swap its rows and
    columns, then flip it left to right, then top to bottom)."""
    return orientation in (5, 6, 7, 8), orientation in (2, 3, 6, 7), orientation in (3, 4, 7, 8)


def upright(hwc: np.ndarray, orientation: int) -> np.ndarray:
    """An HWC image stored with EXIF `orientation`, turned as it is meant to be seen, contiguous."""
    transpose, flip_columns, flip_rows = upright_steps(orientation)
    if transpose:
        hwc = hwc.transpose(1, 0, 2)
    if flip_columns:
        hwc = hwc[:, ::-1]
    if flip_rows:
        hwc = hwc[::-1]
    return np.ascontiguousarray(hwc)
