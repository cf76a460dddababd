import numpy as np

from plates.detection import postprocess


def test_postprocess_clips_drops_tiny_boxes_and_sorts_by_score():
    boxes = np.array([[-5, 10, 50, 30], [10, 10, 11, 30], [60, 20, 120, 200]], np.float32)
    scores = np.array([0.4, 0.9, 0.8], np.float32)
    detections = postprocess(boxes, scores, width=100, height=100)
    np.testing.assert_array_equal(detections.boxes, [[60, 20, 100, 100], [0, 10, 50, 30]])
    np.testing.assert_array_equal(detections.scores, np.array([0.8, 0.4], np.float32))


def test_postprocess_of_nothing_is_empty_with_the_right_shapes():
    detections = postprocess(np.zeros((0, 4)), np.zeros(0), width=10, height=10)
    assert detections.boxes.shape == (0, 4) and detections.scores.shape == (0,) and len(detections) == 0
