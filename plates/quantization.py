"""The detector's ONNX file in INT8: ONNX Runtime's static quantization, calibrated on training photos.

Only the convolutions are quantized (QDQ, weights per channel, activations per tensor, MinMax ranges): they are
nearly all of the detector's time, and the detection head's outputs (boxes in pixels, class scores) keep float.
Calibration photos are letterboxed as Ultralytics' predictor letterboxes a photo at the served size, so the ranges
are those the served detector meets. They must be training photos: never the photos the project measures itself on.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator, Sequence

import cv2
import numpy as np

from plates.onnx_detector import letterbox, onnx_metadata, rgb_planes
from plates.photos import image_files


def calibration_photos(folder: Path, count: int = 64, seed: int = 0) -> list[Path]:
    """`count` photos of `folder`, drawn with `seed`: the same ones for the same folder."""
    photos = image_files(folder)
    random.Random(seed).shuffle(photos)
    return photos[:count]


def letterboxed(image: np.ndarray, imgsz: int, stride: int) -> np.ndarray:
    """`image` (BGR) as the detector's input at `imgsz`: 1x3xHxW RGB in [0, 1], the rectangle padded to the network's
    `stride` that the served detector makes (plates.onnx_detector)."""
    return rgb_planes(letterbox(image, imgsz, stride=stride))


class _Photos:
    """onnxruntime.quantization.CalibrationDataReader over photo files."""

    def __init__(self, input_name: str, photos: Sequence[Path], imgsz: int, stride: int) -> None:
        images = (image for image in map(cv2.imread, map(str, photos)) if image is not None)
        self.batches: Iterator[dict] = ({input_name: letterboxed(image, imgsz, stride)} for image in images)

    def get_next(self) -> dict | None:
        return next(self.batches, None)


def quantize_detector(model: Path, photos: Sequence[Path], imgsz: int, out: Path) -> Path:
    """Write `model` (an Ultralytics ONNX export) quantized to INT8 as `out`, keeping its metadata (the class names,
    stride and task that plates.onnx_detector and Ultralytics read)."""
    import onnx
    import onnxruntime
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    if not photos:
        raise ValueError("no calibration photos")
    metadata = onnx_metadata(model)
    input_name = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"]).get_inputs()[0].name
    calibration = _Photos(input_name, photos, imgsz, int(metadata["stride"]))
    quantize_static(str(model), str(out), calibration, quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=["Conv"], per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax)  # fmt: skip
    quantized = onnx.load(str(out))
    onnx.helper.set_model_props(quantized, metadata)
    onnx.save(quantized, str(out))
    return out
