"""Real one-line plates restacked as type 1A two-line plates (plates.training.stacked), and the crops made of them."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from plates.recognition.crops import CROP_HEIGHT, CROP_WIDTH
from plates.training.dataset import stacked_set
from plates.training.real_plates import RealPlate
from plates.training.stacked import TYPE_1A, as_type_1a, characters, parting


def bars(gaps: list[int], height: int = 60, width: int = 14, tall: int = 40) -> np.ndarray:
    """A white plate with a black bar for each character, `gaps` px apart (one fewer than the bars), from x = 10."""
    plate = np.full((height, 10 + sum(gaps) + width * (len(gaps) + 1) + 10, 3), 235, np.uint8)
    x = 10
    for gap in [*gaps, 0]:
        cv2.rectangle(plate, (x, (height - tall) // 2), (x + width - 1, (height + tall) // 2), (20, 20, 20), -1)
        x += width + gap
    return plate


def test_characters_are_the_tall_blobs_left_to_right_not_specks_nor_the_rim():
    plate = bars([6, 6, 6, 20, 6])
    cv2.circle(plate, (5, 5), 2, (20, 20, 20), -1)  # a screw
    cv2.rectangle(plate, (0, 0), (plate.shape[1] - 1, plate.shape[0] - 1), (20, 20, 20), 1)  # the rim
    assert characters(plate) == [(10, 24), (30, 44), (50, 64), (70, 84), (104, 118), (124, 138)]


def test_a_plate_is_parted_in_the_middle_of_the_wider_gap_after_its_fourth_character():
    assert parting(bars([6, 6, 6, 20, 6])) == (84 + 104) // 2


@pytest.mark.parametrize(
    "plate",
    [bars([6, 6, 6, 6, 6]), bars([6, 6, 20]), np.full((60, 200, 3), 235, np.uint8), np.zeros((6, 40, 3), np.uint8)],
    ids=["no wider gap", "four characters", "blank", "too small"],
)
def test_a_plate_without_the_gap_its_format_sets_is_not_parted(plate):
    assert parting(plate) is None
    assert as_type_1a(plate) is None


def test_the_stack_is_type_1a_shaped_its_left_part_over_its_right():
    plate = bars([6, 6, 6, 20, 6, 12, 6])  # A 123 BC and a two-digit region
    stacked = as_type_1a(plate)
    assert stacked.shape == (120, round(TYPE_1A * 120), 3)
    top, bottom = characters(stacked[:60]), characters(stacked[60:])
    assert len(top) == 4 and len(bottom) == 4


def test_stacked_set_cuts_the_private_plates_that_part_as_two_line_crops(tmp_path):
    image = tmp_path / "plate.png"
    cv2.imwrite(str(image), bars([6, 6, 6, 20, 6, 12, 6]))
    plates = [
        RealPlate(str(image), None, "A123BC77"),
        RealPlate(str(image), None, "AB12377"),  # a taxi's format: not a type 1A text
        RealPlate(str(image), None, "A123BC77", lines=2),  # already two-line
    ]
    crops = stacked_set(plates, 3, seed=0)
    assert crops.texts == ["A123BC77"] * 3
    assert crops.images.shape == (3, CROP_HEIGHT, 2 * CROP_WIDTH, 3) and (crops.lines == 2).all()
    served = stacked_set(plates, 3, seed=0, augment=False)
    assert len(served) == 1 and served.images.shape[2] == 2 * CROP_WIDTH
