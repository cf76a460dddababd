"""One box per plate: a plate's rows boxed apart become the plate, a part boxed beside it goes. The boxes are those the
committed detector gave the real close-ups in runs/by_eye/two_line.json (9139KA42's rows, C161YP190's region)."""

from __future__ import annotations

import numpy as np
import pytest

from plates.detection.detector import whole_plates


def detected(*plates: tuple[list[float], float, int]):
    boxes, scores, lines = zip(*plates)
    return np.array(boxes, np.float32), np.array(scores, np.float32), np.array(lines, np.int64)


@pytest.mark.parametrize("top_first", [True, False])
def test_the_rows_of_a_square_plate_boxed_apart_are_read_as_one_two_line_plate(top_first):
    top, bottom = [14, 61, 479, 284], [12, 193, 480, 436]  # 9139 over KA 42, each boxed as a one-line plate
    rows = [(top, 0.547, 1), (bottom, 0.407, 1)]
    car = ([600, 300, 830, 350], 0.3, 1)  # another car's plate, after them in the order
    boxes, scores, lines = whole_plates(*detected(*(rows if top_first else rows[::-1]), car))
    np.testing.assert_array_equal(boxes, [[12, 61, 480, 436], car[0]])
    assert scores.tolist() == pytest.approx([0.547 if top_first else 0.407, 0.3]) and lines.tolist() == [2, 1]


def test_a_part_of_a_plate_boxed_beside_it_is_dropped():
    plate, region = [0, 92, 477, 387], [255, 240, 473, 372]  # C161YP190 and its region block, 190
    boxes, scores, lines = whole_plates(*detected((plate, 0.867, 2), (region, 0.212, 1)))
    np.testing.assert_array_equal(boxes, [plate])
    assert lines.tolist() == [2]


@pytest.mark.parametrize(
    "first, second",
    [
        # A one-line plate (4.6 times as wide as tall) and a dealer's line of text under it: 2.6 together.
        ([100, 100, 330, 150], [105, 152, 325, 180]),
        # Two cars' plates in a row, side by side.
        ([100, 100, 330, 150], [400, 100, 630, 150]),
        # A plate above a narrower one (a car behind, lower in the photo), not the same width.
        ([100, 100, 200, 160], [120, 165, 170, 195]),
        # Two plates one above the other, apart.
        ([100, 100, 200, 160], [100, 260, 200, 320]),
    ],
)
def test_plates_that_are_not_rows_of_one_stay_as_they_are(first, second):
    boxes, scores, lines = whole_plates(*detected((first, 0.9, 1), (second, 0.5, 1)))
    np.testing.assert_array_equal(boxes, [first, second])
    assert lines.tolist() == [1, 1]


def test_a_box_that_only_overlaps_a_likelier_one_stays():
    # Half of it inside: two plates whose boxes touch in a crowded photo, not a part of one.
    boxes, _, _ = whole_plates(*detected(([0, 0, 100, 30], 0.9, 1), ([50, 0, 150, 30], 0.5, 1)))
    assert len(boxes) == 2


def test_no_boxes_are_no_boxes():
    boxes, scores, lines = whole_plates(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64))
    assert boxes.shape == (0, 4) and scores.shape == lines.shape == (0,)
