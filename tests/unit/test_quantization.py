"""The detector quantized to INT8 finds what the float one finds, and the predictor reads it as it reads an export."""

from __future__ import annotations

import shutil

import cv2
import numpy as np

from plates.detection import DetectorSettings, PlateDetector, same_boxes
from plates.export import export_detector
from plates.quantization import calibration_photos, letterboxed, quantize_detector
from plates.weights import find_weights


def test_calibration_draws_the_same_photos_of_a_folder_every_time(tmp_path):
    for i in range(10):
        (tmp_path / f"{i}.jpg").touch()
    (tmp_path / "labels.txt").touch()
    drawn = calibration_photos(tmp_path, count=4)
    assert len(drawn) == 4 and drawn == calibration_photos(tmp_path, count=4)
    assert drawn != sorted(tmp_path.glob("*.jpg"))[:4], "drawn, not the first in name order"
    assert len(calibration_photos(tmp_path, count=64)) == 10


def test_a_photo_is_letterboxed_to_the_stride_padded_rectangle_in_rgb_from_0_to_1():
    image = np.zeros((439, 780, 3), np.uint8)
    image[..., 2] = 255  # red, in BGR
    boxed = letterboxed(image, 608, stride=32)
    assert boxed.shape == (1, 3, 352, 608) and boxed.dtype == np.float32
    assert boxed[0, 0, 176, 304] == 1.0 and boxed[0, 2, 176, 304] == 0.0  # red first: RGB


def test_the_int8_detector_finds_car_jpgs_plates_where_the_float_one_does(tmp_path, samples):
    shutil.copyfile(find_weights("plate_detector.pt"), tmp_path / "plate_detector.pt")
    exported = export_detector(tmp_path / "plate_detector.pt")
    photos = [samples / "car.jpg", samples / "cat.jpeg"]
    quantized = quantize_detector(exported, photos, 512, tmp_path / "plate_detector.int8.onnx")
    settings = DetectorSettings(imgsz=(512,), conf=(0.2,))
    car = cv2.imread(str(samples / "car.jpg"))
    reference, found = (PlateDetector(path, settings=settings).detect(car) for path in (exported, quantized))
    matched, total, _, _ = same_boxes(reference, found, threshold=0.8)
    assert total >= 1 and matched == total, (reference, found)
    assert quantized.stat().st_size < exported.stat().st_size / 2  # its convolutions' weights are 8-bit
