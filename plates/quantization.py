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

from plates.onnx_detector import letterbox, rgb_planes
from plates.photos import image_files


def calibration_photos(folder: Path, count: int = 64, seed: int = 0) -> list[Path]:
    """`count` photos of `folder`, drawn with `seed`: the same ones for the same folder."""
    photos = image_files(folder)
    random.Random(seed).shuffle(photos)
    return photos[:count]


def letterboxed(image: np.ndarray, imgsz: int) -> np.ndarray:
    """`image` (BGR) as the detector's input at `imgsz`: 1x3xHxW RGB in [0, 1], the stride-padded rectangle the
    served detector makes (plates.onnx_detector)."""
    return rgb_planes(letterbox(image, imgsz, stride=32))


class _Photos:
    """onnxruntime.quantization.CalibrationDataReader over photo files."""

    def __init__(self, input_name: str, photos: Sequence[Path], imgsz: int) -> None:
        self.batches: Iterator[dict] = (
            {input_name: letterboxed(image, imgsz)} for image in map(cv2.imread, map(str, photos)) if image is not None
        )

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
    input_name = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"]).get_inputs()[0].name
    quantize_static(str(model), str(out), _Photos(input_name, photos, imgsz), quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=["Conv"], per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax)  # fmt: skip
    quantized = onnx.load(str(out))
    del quantized.metadata_props[:]
    quantized.metadata_props.extend(onnx.load(str(model), load_external_data=False).metadata_props)
    onnx.save(quantized, str(out))
    return out
