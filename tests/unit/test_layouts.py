import numpy as np
import pytest

from plates.recognition.ctc import Reading
from plates.recognition.layouts import TWO_LINE_SHAPE, likeliest, ways_to_read

# A one-line plate seen straight (4.5 times as wide as tall), a two-line plate's bottom row as a one-class detector
# boxes it (2.4), and a square plate boxed whole (1.6).
BOXES = np.array([[0, 100, 90, 120], [100, 100, 148, 120], [200, 100, 248, 130]], np.float32)


def test_a_box_of_a_square_shape_is_read_as_one_row_and_as_two_grown_up_and_down_to_a_two_line_plates_shape():
    ways = ways_to_read(BOXES, np.ones(3, np.int64), 3.0, height=300)
    assert ways.plate_of.tolist() == [0, 1, 1, 1, 2, 2]
    assert ways.rows.tolist() == [1, 1, 2, 2, 1, 2]
    missing = 48 / TWO_LINE_SHAPE - 20  # 10 px more makes it 1.6 times as wide as tall
    np.testing.assert_allclose(ways.boxes[2], [100, 100 - missing, 148, 120])  # grown upward
    np.testing.assert_allclose(ways.boxes[3], [100, 100, 148, 120 + missing])  # grown downward
    assert ways.boxes[5].tolist() == BOXES[2].tolist()  # already square enough: read once more, as it is


def test_a_grown_box_stays_in_the_photo():
    ways = ways_to_read(np.array([[10, 2, 58, 22]], np.float32), np.ones(1), 3.0, height=30)
    assert ways.boxes[1].tolist() == [10, 0, 58, 22] and ways.boxes[2].tolist() == [10, 2, 58, 30]


def test_the_detectors_class_alone_says_where_the_aspect_is_0():
    ways = ways_to_read(BOXES, np.array([1, 2, 1]), 0.0, height=300)
    assert ways.plate_of.tolist() == [0, 1, 2] and ways.rows.tolist() == [1, 2, 1]
    assert np.array_equal(ways.boxes, BOXES)


def test_a_plate_the_detector_calls_two_line_is_read_once_as_two_rows():
    ways = ways_to_read(BOXES, np.array([1, 2, 2]), 3.0, height=300)
    assert ways.plate_of.tolist() == [0, 1, 2] and ways.rows.tolist() == [1, 2, 2]


def test_no_box_no_reading():
    ways = ways_to_read(np.zeros((0, 4), np.float32), np.zeros(0, np.int64), 3.0, height=300)
    assert ways.plate_of.shape == ways.rows.shape == ways.tilts.shape == (0,) and ways.boxes.shape == (0, 4)


def reading(text, score):
    return Reading(((text, score),)) if text else Reading()


def test_the_likeliest_reading_of_a_plate_stands_and_the_first_where_they_tie():
    readings = [
        reading("A123BC77", 0.9),
        reading("H701HE27", 0.2),
        reading("H701HE27", 0.6),
        reading("", 0),
        reading("", 0),
        reading("B840CK197", 0.5),
        reading("B840CK197", 0.5),
    ]
    assert likeliest(readings, [0, 1, 1, 2, 2, 3, 3]) == [0, 2, 3, 5]


def test_a_plate_no_reading_covers_is_an_error_not_a_blank():
    with pytest.raises(ValueError, match="every plate from 0 on must have one"):
        likeliest([reading("A123BC77", 0.9)], [1])


def test_a_tilted_one_line_plate_is_read_upright_and_levelled():
    ways = ways_to_read(BOXES, np.array([1, 1, 2]), 0.0, height=300, tilts=[0.0, -12.0, 9.0])
    # Plate 1 is read a second time levelled by its tilt; a two-line plate never is.
    assert ways.plate_of.tolist() == [0, 1, 1, 2] and ways.rows.tolist() == [1, 1, 1, 2]
    assert ways.tilts.tolist() == [0, 0, -12, 0]
    assert np.array_equal(ways.boxes[1], ways.boxes[2])


def test_no_way_is_levelled_where_no_plate_is_tilted():
    ways = ways_to_read(BOXES, np.ones(3, np.int64), 3.0, height=300)
    assert not ways.tilts.any() and len(ways.tilts) == len(ways.plate_of)
