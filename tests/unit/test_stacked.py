"""Real one-line plates restacked as two-line ones (plates.training.stacked), and the crops made of them."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from plates.recognition.crops import CROP_HEIGHT, CROP_WIDTH
from plates.recognition.formats import TWO_LINE
from plates.training.dataset import stacked_set
from plates.training.real_plates import RealPlate
from plates.training.stacked import FOUR_DIGIT_SHAPES, KINDS, TYPE_1A, characters, parting, restacked

# A private plate's characters' heights, A 123 BC 77: letters shorter than digits (58 mm against 76); these digits
# differ, so that a stack shows which one it took.
PRIVATE = [30, 40, 38, 36, 30, 30, 32, 32]


def bars(gaps: list[int], tall: list[int] | None = None, height: int = 60, width: int = 14) -> np.ndarray:
    """A white plate with a black bar for each character, `gaps` px apart (one fewer than the bars), from x = 10,
    each as tall as `tall` says (PRIVATE's heights by default)."""
    tall = tall or PRIVATE[: len(gaps) + 1]
    plate = np.full((height, 10 + sum(gaps) + width * (len(gaps) + 1) + 10, 3), 235, np.uint8)
    x = 10
    for gap, bar in zip([*gaps, 0], tall):
        cv2.rectangle(plate, (x, (height - bar) // 2), (x + width - 1, (height + bar) // 2 - 1), (20, 20, 20), -1)
        x += width + gap
    return plate


def private_plate() -> np.ndarray:
    return bars([6, 6, 6, 20, 6, 12, 6])  # A 123 BC and a two-digit region


def test_characters_are_the_tall_blobs_left_to_right_not_specks_nor_the_rim():
    plate = bars([6, 6, 6, 20, 6])
    cv2.circle(plate, (5, 5), 2, (20, 20, 20), -1)  # a screw
    cv2.rectangle(plate, (0, 0), (plate.shape[1] - 1, plate.shape[0] - 1), (20, 20, 20), 1)  # the rim
    assert characters(plate) == [
        (10, 24, 30),
        (30, 44, 40),
        (50, 64, 38),
        (70, 84, 36),
        (104, 118, 30),
        (124, 138, 30),
    ]


def test_a_plate_is_parted_in_the_middle_of_the_wider_gap_after_its_fourth_character():
    assert parting(bars([6, 6, 6, 20, 6]))[1] == (84 + 104) // 2


@pytest.mark.parametrize(
    "plate",
    [
        bars([6, 6, 6, 6, 6]),
        bars([6, 6, 20]),
        bars([6, 6, 6, 20, 6], tall=[40] * 6),
        bars([6, 6, 6, 20, 6, 6], tall=[36, 30, 40, 38, 36, 30, 30]),
        np.full((60, 200, 3), 235, np.uint8),
        np.zeros((6, 40, 3), np.uint8),
    ],
    ids=["no wider gap", "four characters", "letters as tall as digits", "a blob before the letter", "blank", "small"],
)
def test_a_plate_without_the_gap_and_heights_its_format_sets_is_not_parted(plate):
    assert parting(plate) is None
    assert restacked(plate, "A123BC77", np.random.default_rng(0)) == []


def test_type_1a_is_the_plate_s_left_part_over_its_right_in_1a_s_shape():
    stack = restacked(private_plate(), "A123BC77", np.random.default_rng(0))[0]
    assert stack.kind == "type 1A" and stack.text == "A123BC77"
    assert stack.pixels.shape == (120, round(TYPE_1A * 120), 3)
    top, bottom = characters(stack.pixels[:60]), characters(stack.pixels[60:])
    assert [h for *_, h in top] == PRIVATE[:4] and [h for *_, h in bottom] == PRIVATE[4:]


@pytest.mark.parametrize("seed", range(8))
def test_four_digits_give_the_letter_s_place_to_one_of_the_plate_s_digits(seed):
    stack = restacked(private_plate(), "A123BC77", np.random.default_rng(seed))[1]
    assert stack.kind == "four digits" and TWO_LINE.allows(stack.text)
    assert stack.text[1:] == "123BC77" and stack.text[0] in "123"
    assert any(stack.pixels.shape[1] == round(shape * 120) for shape in FOUR_DIGIT_SHAPES)
    top, bottom = characters(stack.pixels[:60]), characters(stack.pixels[60:])
    taken = PRIVATE[int(stack.text[0])]  # the height of the digit it took
    assert [h for *_, h in top] == [taken, *PRIVATE[1:4]] and [h for *_, h in bottom] == PRIVATE[4:]


def test_the_draws_reach_every_digit_and_shape():
    stacks = [restacked(private_plate(), "A123BC77", np.random.default_rng(seed))[1] for seed in range(40)]
    assert {stack.text[0] for stack in stacks} == set("123")
    assert len({stack.pixels.shape[1] for stack in stacks}) == len(FOUR_DIGIT_SHAPES)


def test_stacked_set_cuts_the_private_plates_that_part_as_two_line_crops_of_each_kind(tmp_path):
    image = tmp_path / "plate.png"
    cv2.imwrite(str(image), private_plate())
    plates = [
        RealPlate(str(image), None, "A123BC77"),
        RealPlate(str(image), None, "AB12377"),  # a taxi's format: not a type 1A text
        RealPlate(str(image), None, "A123BC77", lines=2),  # already two-line
    ]
    crops = stacked_set(plates, 3, seed=0)
    assert crops.texts[:3] == ["A123BC77"] * 3 and len(crops) == 6
    assert len(set(crops.texts[3:])) == 1 and crops.texts[3][1:] == "123BC77"
    assert crops.images.shape == (6, CROP_HEIGHT, 2 * CROP_WIDTH, 3) and (crops.lines == 2).all()
    served = stacked_set(plates, 3, seed=0, augment=False, kinds=KINDS[1:])
    assert len(served) == 1 and served.texts[0][1:] == "123BC77" and served.images.shape[2] == 2 * CROP_WIDTH
