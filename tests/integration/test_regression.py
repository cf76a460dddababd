"""Labelled street photos the served pipeline reads right today: a change that loses one of them is a regression.

Taken from ../shared/data/e2e.json, photos of the detector's val split (it never trained on them), with plates of
several sizes and both 2- and 3-digit regions.
"""

from __future__ import annotations

import pytest

from plates.client.service import PlatesClient
from plates.photos.files import read_image

READ_RIGHT = [
    ("detect/images/val/ds_139.jpg", "H001XT177"),
    ("detect/images/val/ds_206.jpg", "X777AM777"),
    ("detect/images/val/ds_022.jpg", "M100MM77"),
    ("detect/images/val/ds_054.jpg", "B001OP64"),
    ("detect/images/val/ds_086.jpg", "A876BC83"),
    ("detect/images/val/ds_117.jpg", "Y420AX78"),
]


@pytest.mark.parametrize(("photo", "text"), READ_RIGHT)
def test_labelled_photo_reads_its_plate(triton_url, samples, photo, text):
    with PlatesClient(triton_url) as client:
        plates = client.recognize(read_image(samples.parent / photo))
    assert text in [p.text for p in plates], plates
