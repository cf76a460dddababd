import json
import os
import subprocess
import sys

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


def test_detector_runs_where_ultralytics_runs_dir_is_not_writable(tmp_path, samples):
    # As in the image: the process's user cannot write the folder Ultralytics' settings name for its runs.
    # Without PYTEST_CURRENT_TEST: under pytest, Ultralytics puts its runs elsewhere, and the test would pass anyway.
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["YOLO_CONFIG_DIR"] = str(tmp_path)
    subprocess.run([sys.executable, "-c", "import ultralytics"], env=env, check=True, capture_output=True)
    settings_file = tmp_path / "Ultralytics" / "settings.json"
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    settings = json.loads(settings_file.read_text())
    settings_file.write_text(json.dumps({**settings, "runs_dir": str(blocked / "runs")}))
    script = f"""
import cv2
from plates.detection import PlateDetector
from plates.weights import find_weights
detector = PlateDetector(find_weights("plate_detector.pt"))
print(len(detector.detect(cv2.imread({str(samples / "car.jpg")!r}))))
"""
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) >= 1
