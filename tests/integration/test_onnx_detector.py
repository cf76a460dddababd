"""The detector run without Ultralytics' predictor, its ONNX export (plates.detection.onnx_detector) and its PyTorch
weights (plates.detection.torch_detector), against the predictor itself."""

from __future__ import annotations

import cv2
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from plates.build.paths import DEFAULT_REPOSITORY
from plates.detection.onnx_detector import OnnxDetector, letterbox, onnx_metadata, rgb_planes
from plates.training import synthetic

ONNX = DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx"


def with_a_square_plate(photo: np.ndarray) -> np.ndarray:
    """`photo` with a rendered two-line square plate drawn in, 150 px wide."""
    plate = synthetic.render_plate("H701HE27", "square", np.random.default_rng(0))
    plate = cv2.resize(plate, (150, round(150 * plate.shape[0] / plate.shape[1])), interpolation=cv2.INTER_AREA)
    photo = photo.copy()
    photo[200 : 200 + plate.shape[0], 300 : 300 + plate.shape[1]] = plate
    return photo


@pytest.fixture(scope="module")
def photos(samples):
    from plates.evaluation.manifests import load_yolo

    car = cv2.imread(str(samples / "car.jpg"))
    val = [cv2.imread(str(p.image)) for p in load_yolo(samples.parent / "detect")[:6]]
    cat = cv2.resize(cv2.imread(str(samples / "cat.jpeg")), (960, 720))
    # Landscape and portrait, small and 1080p: the letterbox pads one side or the other.
    blank = np.zeros((20, 30, 3), np.uint8)
    return [car, cv2.rotate(car, cv2.ROTATE_90_CLOCKWISE), *val, with_a_square_plate(cat), blank]


@pytest.mark.parametrize("runtime", ["onnx", "openvino"])
def test_the_onnx_detector_finds_the_predictors_boxes_scores_and_rows(photos, runtime, tmp_path):
    from ultralytics import YOLO

    predictor = YOLO(str(ONNX), task="detect")
    detector = OnnxDetector(ONNX, runtime, threads=1, precision="f32")
    rows = []
    for index, image in enumerate(photos):
        for imgsz, conf in ((608, 0.2), (416, 0.1)):
            expected = predictor.predict(
                image,
                imgsz=imgsz,
                conf=conf,
                iou=0.5,
                agnostic_nms=True,
                max_det=100,
                verbose=False,
                project=str(tmp_path),
                name="predict",
            )[0].boxes
            boxes, scores, lines = detector.look(image, imgsz, conf, iou=0.5, max_det=100)
            assert len(boxes) == len(expected), (index, imgsz)
            # The predictor ran ONNX Runtime; OpenVINO's sums differ from its in the last bits.
            np.testing.assert_allclose(boxes, expected.xyxy.numpy(), atol=0.01, err_msg=f"photo {index} at {imgsz}")
            np.testing.assert_allclose(scores, expected.conf.numpy(), atol=1e-4, err_msg=f"photo {index} at {imgsz}")
            np.testing.assert_array_equal(lines, expected.cls.numpy().astype(np.int64) + 1)
            rows.extend(lines.tolist())
    assert rows.count(1) >= len(photos) and 2 in rows  # plates of both classes were compared


def test_the_torch_detector_finds_the_predictors_boxes_scores_and_rows(photos, tmp_path):
    import torch
    from ultralytics import YOLO

    from plates.detection.torch_detector import TorchDetector

    weights = DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.pt"
    predictor = YOLO(str(weights), task="detect")
    # On the CPU there is no graph to record: the same eager passes.
    detector = TorchDetector(weights, torch.device("cpu"), cuda_graphs=True)
    assert not detector.session.cuda_graphs
    for index, image in enumerate(photos):
        expected = predictor.predict(
            image,
            imgsz=608,
            conf=0.2,
            iou=0.5,
            agnostic_nms=True,
            max_det=100,
            verbose=False,
            project=str(tmp_path),
            name="predict",
        )[0].boxes
        boxes, scores, lines = detector.look(image, 608, 0.2, iou=0.5, max_det=100)
        np.testing.assert_allclose(boxes, expected.xyxy.numpy(), atol=0.01, err_msg=f"photo {index}")
        np.testing.assert_allclose(scores, expected.conf.numpy(), atol=1e-4, err_msg=f"photo {index}")
        np.testing.assert_array_equal(lines, expected.cls.numpy().astype(np.int64) + 1)


def test_a_photo_is_letterboxed_to_the_stride_padded_rectangle_and_made_rgb_planes_from_0_to_1():
    image = np.zeros((439, 780, 3), np.uint8)
    image[..., 2] = 255  # red, in BGR
    pixels = letterbox(image, 608, stride=32)
    assert pixels.shape == (1, 352, 608, 3) and pixels.dtype == np.uint8
    assert (pixels[0, 0, 0] == 114).all() and (pixels[0, 176, 304] == [0, 0, 255]).all()  # gray above the photo
    planes = rgb_planes(pixels)
    assert planes.shape == (1, 3, 352, 608) and planes.dtype == np.float32
    assert planes[0, 0, 176, 304] == 1.0 and planes[0, 2, 176, 304] == 0.0  # red first: RGB


def tiny_model(path, sides, metadata):
    """An ONNX file with one input of `sides` (height, width: numbers or names) and `metadata`."""
    pixels = helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, *sides])
    out = helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 3, *sides])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Identity", ["images"], ["output0"])], "tiny", [pixels], [out])
    )
    helper.set_model_props(model, metadata)
    onnx.save(model, str(path))
    return path


def test_an_onnx_file_the_detector_cannot_run_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="static.onnx is not a detector exported with dynamic sides"):
        onnx_metadata(tiny_model(tmp_path / "static.onnx", (640, 640), {"stride": "32"}))
    with pytest.raises(ValueError, match="bare.onnx has no 'stride' in its metadata"):
        onnx_metadata(tiny_model(tmp_path / "bare.onnx", ("height", "width"), {}))
    assert onnx_metadata(tiny_model(tmp_path / "ok.onnx", ("height", "width"), {"stride": "32"})) == {"stride": "32"}
    with pytest.raises(ValueError, match="runs on openvino or onnx, not 'torch'"):
        OnnxDetector(ONNX, "torch")
