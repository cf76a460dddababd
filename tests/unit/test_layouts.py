import numpy as np
import pytest

from plates.recognition.ctc import Reading
from plates.recognition.layouts import likeliest, ways_to_read

# A one-line plate seen straight (4.5 times as wide as tall), a square plate (1.6), a plate seen from the side (2.4).
BOXES = np.array([[0, 0, 90, 20], [100, 0, 148, 30], [200, 0, 248, 20]], np.float32)


def test_a_box_of_a_square_plates_shape_is_read_as_one_row_and_as_two():
    plate_of, rows = ways_to_read(BOXES, np.ones(3, np.int64), 2.5)
    assert plate_of.tolist() == [0, 1, 1, 2, 2]
    assert rows.tolist() == [1, 1, 2, 1, 2]


def test_the_detectors_class_alone_says_where_the_aspect_is_0():
    plate_of, rows = ways_to_read(BOXES, np.array([1, 2, 1]), 0.0)
    assert plate_of.tolist() == [0, 1, 2] and rows.tolist() == [1, 2, 1]


def test_a_plate_the_detector_calls_two_line_is_read_once_as_two_rows():
    plate_of, rows = ways_to_read(BOXES, np.array([1, 2, 1]), 2.0)
    assert plate_of.tolist() == [0, 1, 2] and rows.tolist() == [1, 2, 1]


def test_no_box_no_reading():
    plate_of, rows = ways_to_read(np.zeros((0, 4), np.float32), np.zeros(0, np.int64), 2.5)
    assert plate_of.shape == rows.shape == (0,)


def reading(text, score):
    return Reading(((text, score),)) if text else Reading()


def test_the_likelier_reading_of_a_plate_stands_and_the_first_where_they_tie():
    readings = [reading("A123BC77", 0.9), reading("H701HE27", 0.2), reading("H701HE27", 0.6), reading("", 0),
                reading("", 0), reading("B840CK197", 0.5), reading("B840CK197", 0.5)]
    chosen = likeliest(readings, [0, 1, 1, 2, 2, 3, 3], 4)
    assert [r.text for r in chosen] == ["A123BC77", "H701HE27", "", "B840CK197"]
    assert chosen[1].confidence == 0.6 and chosen[3] is readings[5]


def test_a_plate_no_reading_covers_is_an_error_not_a_blank():
    with pytest.raises(ValueError, match="leave some of 2 unread"):
        likeliest([reading("A123BC77", 0.9)], [0], 2)
