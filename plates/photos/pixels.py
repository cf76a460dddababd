"""Images as the service takes them: HWC, 3 channels, uint8, BGR (what `cv2.imread` returns)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from plates.exceptions import InvalidInputError

# The largest photo the service takes: a 4K camera frame (3840x2160) and a 12 MP phone photo (4000x3000) fit, with a
# margin. A side longer than this is no photo of traffic but a mistake or an attack on memory: 48 MiB of pixels at
# most, which sizes the Python backend's shared memory (plates.server.options) and /dev/shm in compose and k8s.
MAX_SIDE = 4096


def check_image_layout(shape: Sequence[int], dtype: str, what: str = "image") -> None:
    """Raise InvalidInputError naming the fault unless `shape`/`dtype` are an HWC uint8 image the detector takes.

    Works from metadata alone, so a tensor on the GPU is checked without copying it to the host.
    """
    if dtype != "uint8":
        raise InvalidInputError(f"{what} must be UINT8, got {dtype}")
    if len(shape) != 3 or shape[2] != 3:
        raise InvalidInputError(f"{what} must be shaped [height, width, 3] (HWC BGR), got {list(shape)}")
    height, width = shape[:2]
    if min(height, width) < 1 or max(height, width) > MAX_SIDE:
        raise InvalidInputError(f"{what} must have sides between 1 and {MAX_SIDE} pixels, got {width}x{height}")


def check_image(image: np.ndarray, what: str = "image") -> np.ndarray:
    """Return `image` if it is an HWC uint8 BGR image the detector can take; raise InvalidInputError naming the
    fault."""
    if not isinstance(image, np.ndarray):
        raise InvalidInputError(f"{what} must be a numpy array, got {type(image).__name__}")
    check_image_layout(image.shape, str(image.dtype), what)
    return image
