"""A photo's file decoded on a model instance's device, as yolo decodes it: on a GPU a JPEG by nvJPEG through
torchvision's `decode_jpeg`, which raises on what nvJPEG rejects; on the CPU, and a PNG anywhere, as the client
decodes it (plates.photos.decoding), then moved."""

from __future__ import annotations

import torch
from torchvision.io import ImageReadMode, decode_jpeg

from plates.exceptions import InvalidInputError
from plates.photos.decoding import decode_pixels, upright_steps
from plates.photos.headers import read_header


def decode_image(data: bytes, device: torch.device, what: str = "image") -> torch.Tensor:
    """`data`, a JPEG or PNG file's bytes, as an HWC BGR uint8 tensor on `device`, turned upright as its EXIF says.
    InvalidInputError naming `what` and the fault for anything else."""
    if device.type == "cpu":  # decode_pixels reads the header itself: 0.2 ms a photo, so once
        return torch.from_numpy(decode_pixels(data, what))
    header = read_header(data, what)
    if header.format != "JPEG":
        return torch.from_numpy(decode_pixels(data, what)).to(device)
    try:
        rgb = decode_jpeg(torch.frombuffer(bytearray(data), dtype=torch.uint8), mode=ImageReadMode.RGB, device=device)
    except torch.cuda.OutOfMemoryError:
        raise
    except RuntimeError as error:
        raise InvalidInputError(f"{what} is a corrupt or truncated JPEG: {error}") from error
    return bgr(upright(rgb, header.orientation))


def bgr(rgb: torch.Tensor) -> torch.Tensor:
    """A CHW RGB image as contiguous HWC BGR, on its device."""
    return rgb.permute(1, 2, 0).flip(2).contiguous()


def upright(chw: torch.Tensor, orientation: int) -> torch.Tensor:
    """A CHW image stored with EXIF `orientation` (1-8), turned as it is meant to be seen (upright_steps)."""
    transpose, flip_columns, flip_rows = upright_steps(orientation)
    if transpose:
        chw = chw.transpose(1, 2)
    if flip_columns:
        chw = chw.flip(2)
    if flip_rows:
        chw = chw.flip(1)
    return chw
