"""schemathesis's photos (SCHEMATHESIS_HOOKS): a request's `upload` as the schema describes it, a JPEG or PNG photo
(its multipart encoding's contentType; base64 of one in an urlencoded form), never arbitrary bytes, which the
schema's types cannot rule out and the gateway refuses with 400."""

from __future__ import annotations

import base64

import cv2
import numpy as np
import schemathesis
from hypothesis import strategies as st


def photos(extension: str) -> list[bytes]:
    rng = np.random.default_rng(0)
    sizes = [(64, 48), (320, 240)]
    return [cv2.imencode(extension, rng.integers(0, 256, (h, w, 3), np.uint8))[1].tobytes() for w, h in sizes]


JPEGS, PNGS = photos(".jpg"), photos(".png")
schemathesis.openapi.media_type("image/jpeg", st.sampled_from(JPEGS))
schemathesis.openapi.media_type("image/png", st.sampled_from(PNGS))
schemathesis.openapi.format("byte", st.sampled_from([base64.b64encode(photo).decode() for photo in JPEGS + PNGS]))
