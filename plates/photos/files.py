"""Photo files: their bytes as they are stored (what the client sends), and their pixels (to send raw or to draw).

Every caller that reads a photo from disk comes here, so a missing file, a directory, an unreadable file and a
corrupt or truncated photo get the same one-line error, naming the file, wherever they are read.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from plates.exceptions import InvalidInputError
from plates.photos.decoding import decode_pixels

# What a folder's photos are named: every caller that takes a folder of photos takes these.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


def image_files(folder: Path) -> list[Path]:
    """The photo files of `folder` (IMAGE_SUFFIXES, any case), in name order."""
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())


def read_photo(path: str | Path) -> bytes:
    """The file's bytes, or InvalidInputError naming `path` and why it cannot be read."""
    path = Path(path)
    if path.is_dir():
        raise InvalidInputError(f"{path}: is a directory, not a photo")
    if path.exists() and not path.is_file():  # a pipe or a device would be read forever
        raise InvalidInputError(f"{path}: is not a regular file")
    try:
        data = path.read_bytes()
    except FileNotFoundError as error:
        raise InvalidInputError(f"{path}: no such file") from error
    except OSError as error:
        raise InvalidInputError(f"{path}: cannot read: {error.strerror}") from error
    if not data:
        raise InvalidInputError(f"{path}: empty file")
    return data


def read_image(path: str | Path) -> np.ndarray:
    """The photo's pixels as BGR uint8, decoded as the server decodes them; InvalidInputError naming `path`."""
    return decode_pixels(read_photo(path), str(path))
