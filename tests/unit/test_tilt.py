import math

import cv2
import numpy as np
import pytest

from plates.recognition.crops import REFERENCE_FRAME, CropVariant, box_tilts, cut_crops, level_cuts, prepare_crops
from plates.recognition.tilt import PLATE_ASPECT, levelled_size, plate_tilt, tilt_bound

PLATE = (464, 100)  # width, height: a one-line plate 4.64 times as wide as tall


def drawn_plate() -> np.ndarray:
    """A white plate with black characters, BGR."""
    plate = np.full((PLATE[1], PLATE[0], 3), 240, np.uint8)
    cv2.rectangle(plate, (2, 2), (PLATE[0] - 3, PLATE[1] - 3), (20, 20, 20), 3)
    cv2.putText(plate, "A123BC 77", (18, 78), cv2.FONT_HERSHEY_SIMPLEX, 2.3, (20, 20, 20), 7)
    return plate


def tilted_scene(angle: float) -> tuple[np.ndarray, np.ndarray]:
    """The drawn plate turned by `angle` degrees (counterclockwise) in the middle of a grey 1920x1080 frame, and
    its upright bounding box."""
    width, height = REFERENCE_FRAME
    frame = np.full((height, width, 3), 90, np.uint8)
    left, top = (width - PLATE[0]) // 2, (height - PLATE[1]) // 2
    frame[top : top + PLATE[1], left : left + PLATE[0]] = drawn_plate()
    mask = np.zeros((height, width), np.uint8)
    mask[top : top + PLATE[1], left : left + PLATE[0]] = 255
    turn = cv2.getRotationMatrix2D((left + PLATE[0] / 2, top + PLATE[1] / 2), angle, 1.0)
    frame = cv2.warpAffine(frame, turn, (width, height), flags=cv2.INTER_CUBIC, borderValue=(90, 90, 90))
    ys, xs = np.nonzero(cv2.warpAffine(mask, turn, (width, height)) > 127)
    return frame, np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], np.float32)


def tight_cut(frame: np.ndarray, box: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(cut_crops(frame, box[None], [CropVariant(0.0, 0.0)])[0], cv2.COLOR_BGR2GRAY)


@pytest.mark.parametrize("angle", [-25, -12, 8, 20])
def test_the_tilt_that_levels_a_plate_turns_it_back(angle):
    frame, box = tilted_scene(angle)
    assert abs(plate_tilt(tight_cut(frame, box)) + angle) <= 1


def test_a_level_plate_and_a_blank_cut_are_not_turned():
    frame, box = tilted_scene(0)
    assert plate_tilt(tight_cut(frame, box)) == 0
    assert plate_tilt(np.full((40, 90), 128, np.uint8)) == 0


def test_the_tilt_is_searched_within_the_bound_given():
    frame, box = tilted_scene(20)
    assert plate_tilt(tight_cut(frame, box), most=10) == -10


def test_a_box_bounds_the_tilt_of_the_plate_in_it():
    assert tilt_bound(PLATE_ASPECT) == tilt_bound(6.0) == 0.0
    frame, box = tilted_scene(20)
    # The drawn plate is as wide for its height as the standard's, so its box allows exactly its tilt.
    assert tilt_bound(float((box[2] - box[0]) / (box[3] - box[1]))) == pytest.approx(20, abs=1.5)


def test_the_levelled_size_is_the_tilted_rectangles_own():
    turn = math.radians(15)
    width = PLATE[0] * math.cos(turn) + PLATE[1] * math.sin(turn)
    height = PLATE[0] * math.sin(turn) + PLATE[1] * math.cos(turn)
    assert levelled_size(width, height, 15) == pytest.approx(PLATE)
    assert levelled_size(width, height, -15) == pytest.approx(PLATE)
    # A box far taller than a plate tilted 5 degrees could fill: no such rectangle.
    assert levelled_size(100, 100, 5) is not None and levelled_size(100, 20, 40) is None


def test_a_tilted_plate_is_cut_as_the_level_plate_is():
    level_frame, level_box = tilted_scene(0)
    (level,) = cut_crops(level_frame, level_box[None], [CropVariant(0.1, 0.03)])
    frame, box = tilted_scene(18)
    (levelled,) = level_cuts(frame, box, -18.0, [CropVariant(0.1, 0.03)])
    # The plate shrunk to three times the reader's crop width (fit averages it to the crop's), its margins around it, as
    # tall for its width as the level cut.
    assert levelled.shape[1] == round(282 * (1 + 2 * 0.03))
    assert levelled.shape[0] / levelled.shape[1] == pytest.approx(level.shape[0] / level.shape[1], abs=0.01)
    (upright,) = cut_crops(frame, box[None], [CropVariant(0.1, 0.03)])

    def likeness(cut: np.ndarray) -> float:
        size = (level.shape[1], level.shape[0])
        return float(np.corrcoef(cv2.resize(cut, size).ravel(), level.ravel())[0, 1])

    assert likeness(levelled) > 0.9 > likeness(upright)


def test_only_a_tilted_one_line_plates_box_of_a_tilted_shape_has_a_tilt():
    frame, box = tilted_scene(18)
    level_frame, level_box = tilted_scene(0)
    assert box_tilts(frame, np.stack([box, box]), [1, 2], below=3.0).tolist() == pytest.approx([-18, 0], abs=1)
    assert box_tilts(frame, box[None], [1], below=1.5).tolist() == [0]  # the box is 1.9 times as wide as tall
    assert box_tilts(frame, box[None], [1], below=3.0, min_tilt=20).tolist() == [0]
    # A level plate boxed loosely, as tall as a tilted one's box: its cut shows no tilt.
    loose = level_box + np.array([0, -60, 0, 60], np.float32)
    assert box_tilts(level_frame, loose[None], [1], below=3.0).tolist() == [0]


def test_a_box_no_plate_of_the_tilt_fits_is_refused():
    with pytest.raises(ValueError, match="no plate tilted 40.0 degrees has the box 100x20"):
        level_cuts(np.zeros((1080, 1920, 3), np.uint8), np.array([0, 0, 100, 20], np.float32), 40.0, [CropVariant()])


def test_only_the_one_line_plates_given_a_tilt_are_levelled():
    frame, box = tilted_scene(18)
    boxes = np.stack([box, box])
    upright = prepare_crops(frame, boxes, lines=[1, 1])
    assert np.array_equal(prepare_crops(frame, boxes, lines=[1, 1], tilts=[0, 0]), upright)
    levelled = prepare_crops(frame, boxes, lines=[1, 1], tilts=[0, -18])
    assert np.array_equal(levelled[0], upright[0]) and not np.array_equal(levelled[1], upright[1])
    two_line = prepare_crops(frame, boxes, lines=[2, 2], layout="rows")
    assert np.array_equal(prepare_crops(frame, boxes, lines=[2, 2], layout="rows", tilts=[-18, -18]), two_line)
