"""The detector quantized to INT8 finds what the float one finds, and the predictor reads it as it reads an export."""

from __future__ import annotations

import shutil

import cv2
import numpy as np
import onnx
import pytest

from plates.build.quantization import calibration_photos, float_convolutions, letterboxed, quantize_detector
from plates.build.repository import export_detector
from plates.build.weights import find_weights
from plates.detection.detector import DetectorSettings, PlateDetector
from plates.detection.onnx_detector import onnx_metadata
from plates.evaluation.scoring import same_boxes


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


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("detector")
    shutil.copyfile(find_weights("plate_detector.pt"), folder / "plate_detector.pt")
    return export_detector(folder / "plate_detector.pt")


def test_the_int8_detector_finds_car_jpgs_plates_where_the_float_one_does(tmp_path, samples, exported):
    photos = [samples / "car.jpg", samples / "cat.jpeg"]
    quantized = quantize_detector(exported, photos, 512, tmp_path / "plate_detector.int8.onnx")
    settings = DetectorSettings(imgsz=(512,), conf=(0.2,))
    car = cv2.imread(str(samples / "car.jpg"))
    reference, found = (PlateDetector(path, settings=settings).detect(car) for path in (exported, quantized))
    matched, total, _, _ = same_boxes(reference, found, threshold=0.8)
    assert total >= 1 and matched == total, (reference, found)
    assert quantized.stat().st_size < exported.stat().st_size / 2  # its convolutions' weights are 8-bit


def test_the_first_convolution_and_the_box_branch_stay_float_and_the_rest_run_in_int8(tmp_path, samples, exported):
    quantized = quantize_detector(exported, [samples / "car.jpg"], 512, tmp_path / "plate_detector.int8.onnx")
    graph = onnx.load(str(quantized)).graph
    dequantized = {output for node in graph.node if node.op_type == "DequantizeLinear" for output in node.output}
    convolutions = {node.name: node for node in graph.node if node.op_type == "Conv"}
    float_names = float_convolutions(exported)
    assert float_names[0] == next(iter(convolutions)) and float_names[-1] == "/model.23/dfl/conv/Conv"
    assert len(float_names) == 11  # the first, the box branch's 3 convolutions at each of 3 scales, the DFL
    assert not dequantized & set(convolutions[float_names[0]].input), "the first reads the photo's pixels as they are"
    for name, node in convolutions.items():
        if name in float_names:  # float weights (its input may be a quantized tensor's float values, shared)
            assert node.input[1] not in dequantized, f"{name} has float weights"
        else:
            assert set(node.input[:2]) <= dequantized, f"{name} takes INT8 input and weights"
    assert len(convolutions) - len(float_names) >= 70


def test_a_file_that_is_no_ultralytics_detector_is_refused(tmp_path):
    import onnx.helper as make

    graph = make.make_graph(
        [make.make_node("Relu", ["x"], ["y"])],
        "g",
        [make.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
        [make.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])],
    )
    onnx.save(make.make_model(graph), str(tmp_path / "relu.onnx"))
    with pytest.raises(ValueError, match="has no Detect head with one DFL convolution"):
        float_convolutions(tmp_path / "relu.onnx")


def test_the_same_weights_and_photos_make_the_same_file_with_the_metadata_asked(tmp_path, samples, exported):
    # weights/plate_detector.int8.onnx's recorded SHA-256 is remade by anyone who runs convert/quantize_detector.py.
    made = [
        quantize_detector(exported, [samples / "car.jpg"], 512, tmp_path / f"{i}.onnx", {"made_from": "abc"})
        for i in range(2)
    ]
    assert made[0].read_bytes() == made[1].read_bytes()
    metadata = onnx_metadata(made[0])
    assert metadata["made_from"] == "abc" and metadata["stride"] == "32" and "date" not in metadata
