import numpy as np
import pytest

from plates.detection import DetectorSettings, merge, postprocess


def test_merge_keeps_one_box_per_plate_across_passes():
    first = (np.array([[10, 10, 50, 20], [100, 100, 140, 110]], np.float32), np.array([0.3, 0.25], np.float32))
    second = (np.array([[11, 10, 51, 21], [200, 10, 240, 20]], np.float32), np.array([0.7, 0.6], np.float32))
    boxes, scores = merge([first[0], second[0]], [first[1], second[1]], iou=0.5)
    np.testing.assert_array_equal(scores, np.array([0.7, 0.6, 0.25], np.float32))
    np.testing.assert_array_equal(boxes, [[11, 10, 51, 21], [200, 10, 240, 20], [100, 100, 140, 110]])


def test_merge_of_empty_passes_is_empty():
    boxes, scores = merge([np.zeros((0, 4)), np.zeros((0, 4))], [np.zeros(0), np.zeros(0)], iou=0.5)
    assert boxes.shape == (0, 4) and scores.shape == (0,)


def test_settings_need_one_threshold_per_size():
    with pytest.raises(ValueError, match="'conf' needs one value per 'imgsz'"):
        DetectorSettings(imgsz=(480, 800), conf=(0.2,))


def test_postprocess_clips_drops_tiny_boxes_and_sorts_by_score():
    boxes = np.array([[-5, 10, 50, 30], [10, 10, 11, 30], [60, 20, 120, 200]], np.float32)
    scores = np.array([0.4, 0.9, 0.8], np.float32)
    detections = postprocess(boxes, scores, width=100, height=100)
    np.testing.assert_array_equal(detections.boxes, [[60, 20, 100, 100], [0, 10, 50, 30]])
    np.testing.assert_array_equal(detections.scores, np.array([0.8, 0.4], np.float32))


def test_postprocess_of_nothing_is_empty_with_the_right_shapes():
    detections = postprocess(np.zeros((0, 4)), np.zeros(0), width=10, height=10)
    assert detections.boxes.shape == (0, 4) and detections.scores.shape == (0,) and len(detections) == 0
