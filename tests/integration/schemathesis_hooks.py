"""schemathesis's photos (SCHEMATHESIS_HOOKS): a request's `upload` as the schema describes it, a JPEG or PNG photo
(its multipart encoding's contentType; base64 of one in an urlencoded form), never arbitrary bytes, which the
schema's types cannot rule out and the gateway refuses with 400.

And one fix of schemathesis itself (4.29.4, and 4.32.0 alike): before it counts an accepted negative case as a
failure, its negative_data_rejection check validates the form as the server read it, which is right, since a form
cannot carry some of its mutations (an empty list is no field, a list of one value is that value). But it hands the
validator (jsonschema_rs) the form's file as bytes, which jsonschema_rs refuses (ValueError: Unsupported type), so
every such case of a multipart form with a photo counted as a failure. The validators of that check read a file as
the empty text instead: `format: binary` says nothing of a file's content.
"""

from __future__ import annotations

import base64

import cv2
import numpy as np
import schemathesis
from hypothesis import strategies as st
from schemathesis.specs.openapi import checks
from schemathesis.transport.serialization import Binary


def photos(extension: str) -> list[bytes]:
    rng = np.random.default_rng(0)
    sizes = [(64, 48), (320, 240)]
    return [cv2.imencode(extension, rng.integers(0, 256, (h, w, 3), np.uint8))[1].tobytes() for w, h in sizes]


JPEGS, PNGS = photos(".jpg"), photos(".png")
schemathesis.openapi.media_type("image/jpeg", st.sampled_from(JPEGS))
schemathesis.openapi.media_type("image/png", st.sampled_from(PNGS))
# Where schemathesis generates the photo without the encoding's strategies above (some of its valid cases): the
# schema's only `format: binary` field is the photo.
schemathesis.openapi.format("binary", st.sampled_from(JPEGS + PNGS))
schemathesis.openapi.format("byte", st.sampled_from([base64.b64encode(photo).decode() for photo in JPEGS + PNGS]))


def files_as_text(instance):
    if isinstance(instance, (bytes, Binary)):
        return ""
    if isinstance(instance, dict):
        return {name: files_as_text(value) for name, value in instance.items()}
    if isinstance(instance, list):
        return [files_as_text(item) for item in instance]
    return instance


class FilesAsText:
    """A jsonschema_rs validator that validates a file as the empty text."""

    def __init__(self, validator) -> None:
        self.validator = validator

    def is_valid(self, instance) -> bool:
        return self.validator.is_valid(files_as_text(instance))

    def iter_errors(self, instance):
        return self.validator.iter_errors(files_as_text(instance))


make_validator = checks.make_validator  # an AttributeError here: a schemathesis without the function this fixes
checks.make_validator = lambda *args, **kwargs: FilesAsText(make_validator(*args, **kwargs))
