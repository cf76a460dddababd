"""A photo file's format, size and orientation from its header alone, before any pixel is decoded.

Apart from plates.photos.decoding so that a process that only checks photos (the gateway) reads headers the way the
server does, and decodes nothing.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

from PIL import Image

from plates.exceptions import InvalidInputError
from plates.photos.pixels import MAX_SIDE, check_image_layout

# PIL's name for a format -> ours. MPO (phone cameras' multi-picture JPEG) is a JPEG followed by more JPEGs: its
# first picture is the photo.
FORMATS = {"JPEG": "JPEG", "MPO": "JPEG", "PNG": "PNG"}
_EXIF_ORIENTATION = 0x0112
_END_OF_IMAGE = b"\xff\xd9"


@dataclass(frozen=True)
class Header:
    format: str  # JPEG or PNG
    width: int  # as stored, before the EXIF orientation is applied
    height: int
    orientation: int  # EXIF orientation, 1 (as stored) to 8


def read_header(data: bytes, what: str = "image") -> Header:
    """Format, size and orientation of an encoded photo, from its header alone; InvalidInputError naming the fault."""
    if not data:
        raise InvalidInputError(f"{what} is empty")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise InvalidInputError(f"{what} is larger than {MAX_SIDE}x{MAX_SIDE} pixels: {error}") from error
    except Exception as error:  # PIL raises several kinds for bytes that are no image it knows
        raise InvalidInputError(f"{what} is not a JPEG or PNG image ({len(data)} bytes)") from error
    with image:
        if image.format not in FORMATS:
            raise InvalidInputError(f"{what} is a {image.format} image: only JPEG and PNG are supported")
        kind = FORMATS[image.format]
        orientation = image.getexif().get(_EXIF_ORIENTATION, 1) if kind == "JPEG" else 1
        header = Header(kind, image.width, image.height, orientation if orientation in range(1, 9) else 1)
    check_image_layout((header.height, header.width, 3), "uint8", what)
    if header.format == "JPEG" and data.find(_END_OF_IMAGE, _scan_offset(data, what)) < 0:
        raise InvalidInputError(f"{what} is a truncated JPEG: it ends before its end-of-image marker")
    return header


def _scan_offset(data: bytes, what: str) -> int:
    """Where the first scan of a JPEG begins: after it, the only end-of-image marker is the photo's own (an EXIF
    thumbnail before it has one too, so searching the whole file would miss a cut photo)."""
    offset = 2
    while offset + 4 <= len(data) and data[offset] == 0xFF:
        marker, length = data[offset + 1], int.from_bytes(data[offset + 2 : offset + 4], "big")
        offset += 2 + length
        if marker == 0xDA:  # start of scan
            return offset
    raise InvalidInputError(f"{what} is a truncated or corrupt JPEG: no image data after its header")
