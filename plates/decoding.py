"""Encoded photos (JPEG, PNG) to the pixels the service takes: HWC BGR uint8, on the device asked for.

One function, `decode_image`, serves the server (on its model instance's device) and the client (on the CPU, to
send raw pixels or to draw), so both see the same pixels and reject the same files. The header is read first, so
a photo that claims to be too large, or is not JPEG or PNG, is refused before any pixel is decoded; a JPEG that
stops before its end-of-image marker is refused as truncated, on any device.

On the CPU a JPEG is decoded by simplejpeg (libjpeg-turbo) in strict mode: what libjpeg reports as corrupt data
(a photo cut short with an end-of-image marker appended, random bytes in its middle) is an error, where
torchvision's `decode_jpeg` and `cv2.imdecode` only print libjpeg's warning and return the damaged photo as if it
were whole. It gives BGR directly, the same pixels as `cv2.imread`, in 4.3 ms for a 1920x1080 frame where
torchvision with the channel swap took 6.7 (docs/performance.md). On a GPU the JPEG is decoded by nvJPEG through
torchvision's `decode_jpeg`, which raises on what nvJPEG rejects. PNG is decoded by torchvision (libpng, which
checks every chunk's CRC) on the CPU, then moved.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import cv2
import numpy as np
import simplejpeg
import torch
from PIL import Image
from torchvision.io import ImageReadMode, decode_jpeg, decode_png

from plates.exceptions import InvalidInputError
from plates.images import MAX_SIDE, check_image_layout

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


def decode_image(data: bytes, device: torch.device, what: str = "image") -> torch.Tensor:
    """`data`, a JPEG or PNG file's bytes, as an HWC BGR uint8 tensor on `device`, turned upright as its EXIF says
    (as `cv2.imread` does). InvalidInputError naming `what` and the fault for anything else."""
    header = read_header(data, what)
    if header.format == "JPEG" and device.type == "cpu":
        try:
            pixels = simplejpeg.decode_jpeg(data, colorspace="BGR", strict=True)
        except ValueError as error:
            raise InvalidInputError(f"{what} is a corrupt or truncated JPEG: {error}") from error
        return upright_hwc(torch.from_numpy(pixels), header.orientation)
    encoded = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    try:
        if header.format == "JPEG":
            rgb = decode_jpeg(encoded, mode=ImageReadMode.RGB, device=device)
        else:
            rgb = decode_png(encoded, mode=ImageReadMode.RGB).to(device)
    except torch.cuda.OutOfMemoryError:
        raise
    except RuntimeError as error:
        raise InvalidInputError(f"{what} is a corrupt or truncated {header.format}: {error}") from error
    if rgb.dtype == torch.uint16:  # a 16-bit PNG: keep the high byte, as cv2.imread does
        rgb = (rgb.to(torch.int32) >> 8).to(torch.uint8)
    return bgr(upright(rgb, header.orientation))


def bgr(rgb: torch.Tensor) -> torch.Tensor:
    """A CHW RGB image as contiguous HWC BGR, on its device."""
    hwc = rgb.permute(1, 2, 0)
    if hwc.device.type == "cpu":
        # OpenCV's vectorised swap takes 0.3 ms for a 1920x1080 frame; torch's flip takes 2 ms, and 4 ms in a
        # model's process, whose OpenMP threads it must wake (README, Speed: yolo swaps the channels).
        return torch.from_numpy(cv2.cvtColor(np.ascontiguousarray(hwc.numpy()), cv2.COLOR_RGB2BGR))
    return hwc.flip(2).contiguous()


def upright_hwc(hwc: torch.Tensor, orientation: int) -> torch.Tensor:
    """An HWC image stored with EXIF `orientation`, turned as it is meant to be seen, contiguous."""
    if orientation == 1:
        return hwc
    return upright(hwc.permute(2, 0, 1), orientation).permute(1, 2, 0).contiguous()


def upright(chw: torch.Tensor, orientation: int) -> torch.Tensor:
    """A CHW image stored with EXIF `orientation` (1-8), turned as it is meant to be seen."""
    if orientation in (5, 6, 7, 8):
        chw = chw.transpose(1, 2)
    if orientation in (2, 3, 6, 7):
        chw = chw.flip(2)
    if orientation in (3, 4, 7, 8):
        chw = chw.flip(1)
    return chw

