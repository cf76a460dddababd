"""The photo every server warms up with (plates.server.warmup), and the form Triton reads it in from a file.

The build writes it where each model_warmup and the supervisor's reload read it (plates.build.repository): a drawn
plate photo at a 16:9 frame's shape (convert/warmup_photo.py made it).
"""

from __future__ import annotations

import struct
from pathlib import Path

PHOTO = Path(__file__).with_name("warmup_photo.jpg")


def bytes_element(data: bytes) -> bytes:
    """`data` as one element of a BYTES tensor, as Triton reads it from a binary body or a model_warmup file: its
    length (4 bytes, little-endian), then its bytes."""
    return struct.pack("<I", len(data)) + data
