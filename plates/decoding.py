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

import cv2
import numpy as np
import simplejpeg
import torch
from torchvision.io import ImageReadMode, decode_jpeg, decode_png

from plates.exceptions import InvalidInputError
from plates.headers import read_header


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
        # model's process, whose OpenMP threads it must wake (docs/performance.md, Decoding).
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

