"""The detector's ONNX file in INT8: ONNX Runtime's static quantization, calibrated on training photos.

Only the convolutions are quantized (QDQ, weights per channel, activations per tensor, MinMax ranges): they are
nearly all of the detector's time, and the detection head's outputs (boxes in pixels, class scores) keep float. Two
parts stay float (float_convolutions), measured against the float detector on 200 training photos at the served
threshold (docs/performance.md, "The detector in INT8"):
- the first convolution, the one that reads the photo's pixels: quantized with the rest, the boxes moved (IoU under
  0.9, or a box more or fewer) on 31 photos; with it in float, on 7, at the same speed;
- the head's box branch (its cv2 convolutions and the DFL), which places each box: the recognizer reads the crop cut
  from it, and on a plate 12 px tall a pixel of box changes the reading (car.jpg's read B840PK197 with the branch in
  INT8). In float, the boxes moved on 4 photos, at 0.86-0.92 of the float detector's time against 0.79.
Calibration photos are letterboxed as Ultralytics' predictor letterboxes a photo at the served size, so the ranges
are those the served detector meets. They must be training photos: never the photos the project measures itself on.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import cv2
import numpy as np

from plates.detection.onnx_detector import letterbox, onnx_metadata, rgb_planes
from plates.photos.files import image_files

# The metadata key under which a quantized file records the SHA-256 of the weights it was made from.
QUANTIZED_FROM = "plates_quantized_from_sha256"


def calibration_photos(folder: Path, count: int = 64, seed: int = 0) -> list[Path]:
    """`count` photos of `folder`, drawn with `seed`: the same ones for the same folder."""
    photos = image_files(folder)
    random.Random(seed).shuffle(photos)
    return photos[:count]


def letterboxed(image: np.ndarray, imgsz: int, stride: int) -> np.ndarray:
    """`image` (BGR) as the detector's input at `imgsz`: 1x3xHxW RGB in [0, 1], the rectangle padded to the network's
    `stride` that the served detector makes (plates.detection.onnx_detector)."""
    return rgb_planes(letterbox(image, imgsz, stride=stride))


class _Photos:
    """onnxruntime.quantization.CalibrationDataReader over photo files."""

    def __init__(self, input_name: str, photos: Sequence[Path], imgsz: int, stride: int) -> None:
        images = (image for image in map(cv2.imread, map(str, photos)) if image is not None)
        self.batches: Iterator[dict] = ({input_name: letterboxed(image, imgsz, stride)} for image in images)

    def get_next(self) -> dict | None:
        return next(self.batches, None)


def float_convolutions(model: Path) -> list[str]:
    """The Conv nodes of `model` (an Ultralytics detector's ONNX export) that stay float: the first of its graph
    (nodes are stored in the order they run), and those of its Detect head's box branch and DFL ("/model.23/cv2...",
    "/model.23/dfl/conv/Conv" in YOLO11n's export)."""
    import onnx

    graph = onnx.load(str(model), load_external_data=False).graph
    convolutions = [node.name for node in graph.node if node.op_type == "Conv"]
    dfl = [name for name in convolutions if name.endswith("/dfl/conv/Conv")]
    if not convolutions or len(dfl) != 1:
        raise ValueError(f"{model} has no Detect head with one DFL convolution: not an Ultralytics detector's export")
    head = dfl[0].removesuffix("dfl/conv/Conv")
    return [convolutions[0], *(name for name in convolutions if name.startswith(head + "cv2")), dfl[0]]


def quantize_detector(
    model: Path, photos: Sequence[Path], imgsz: int, out: Path, more_metadata: Mapping[str, str] | None = None
) -> Path:
    """Write `model` (an Ultralytics ONNX export) quantized to INT8 as `out`, keeping its metadata (the class names,
    stride and task that plates.detection.onnx_detector and Ultralytics read), with `more_metadata` added and without
    the export's date: the same weights and photos make the same file, byte for byte."""
    import onnx
    import onnxruntime
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    if not photos:
        raise ValueError("no calibration photos")
    metadata = onnx_metadata(model)
    input_name = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"]).get_inputs()[0].name
    calibration = _Photos(input_name, photos, imgsz, int(metadata["stride"]))
    quantize_static(
        str(model),
        str(out),
        calibration,
        quant_format=QuantFormat.QDQ,
        op_types_to_quantize=["Conv"],
        per_channel=True,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        calibrate_method=CalibrationMethod.MinMax,
        nodes_to_exclude=float_convolutions(model),
    )
    quantized = onnx.load(str(out))
    del quantized.metadata_props[:]
    del quantized.graph.value_info[:]  # the quantizer's shape notes, which it writes differently run to run
    kept = {key: value for key, value in metadata.items() if key != "date"}
    onnx.helper.set_model_props(quantized, {**kept, **(more_metadata or {})})
    onnx.save(quantized, str(out))
    return out
