"""The logic behind the `yolo` model: its config made into a detector and crop variants; a photo in, plate crops
ready for the STN, their boxes and scores out. Used by its model.py and by the in-process pipeline alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from plates.detection.detector import (
    CPU_ONLY,
    Detections,
    DetectorSettings,
    PlateDetector,
    detector_file,
    detector_format,
    inference_precision,
)
from plates.exceptions import ModelConfigError
from plates.inference.model_config import (
    ModelConfig,
    float_list,
    nonnegative_float,
    nonnegative_int,
    positive_int,
    positive_int_list,
    unit_float,
    unit_float_list,
    yes_no,
)
from plates.photos.pixels import check_image
from plates.recognition.crops import box_tilts, crop_rows, prepare_crops, two_line_layout, variants
from plates.recognition.layouts import ways_to_read


class DetectorModel:
    def __init__(self, config: ModelConfig, version_folder: Path, device: torch.device) -> None:
        config.tensor("input", "input__0", "TYPE_UINT8", [-1, -1, 3])
        config.tensor("input", "image_bytes", "TYPE_STRING", [1])
        config.tensor("output", "output__0", "TYPE_FP32", [-1, 3, 24, -1])
        config.tensor("output", "output__1", "TYPE_FP32", [-1, 4])
        config.tensor("output", "output__2", "TYPE_FP32", [-1])
        config.tensor("output", "output__3", "TYPE_INT64", [-1])
        config.tensor("output", "output__4", "TYPE_INT64", [-1])
        self.device = device
        self.format = format = config.parameter("format", detector_format)
        if format in CPU_ONLY and device.type != "cpu":
            # The CPU builds of ONNX Runtime and OpenVINO are the ones installed: Ultralytics would pip-install
            # onnxruntime-gpu here.
            raise ModelConfigError(
                f"model 'yolo': format '{format}' runs on the CPU only; set parameter 'format' to 'torch' for {device}"
            )
        precision = config.parameter("precision", inference_precision, default="f32")
        try:
            weights = Path(version_folder) / detector_file(format, precision)
        except ValueError as error:
            raise ModelConfigError(f"model 'yolo': {error}") from error
        if not weights.is_file():
            raise FileNotFoundError(f"model 'yolo': weights {weights} not found; run convert/build_model_repository.py")
        try:
            settings = DetectorSettings(
                imgsz=tuple(config.parameter("imgsz", positive_int_list)),
                conf=tuple(config.parameter("conf", unit_float_list)),
                iou=config.parameter("iou", unit_float),
                max_det=config.parameter("max_det", positive_int),
                second_look_imgsz=config.parameter("second_look_imgsz", nonnegative_int),
                second_look_conf=config.parameter("second_look_conf", unit_float),
                second_look_width=config.parameter("second_look_width", unit_float),
                second_look_fill=config.parameter("second_look_fill", unit_float),
                second_look_hint=config.parameter("second_look_hint", unit_float, default=0.0),
                close_look_imgsz=config.parameter("close_look_imgsz", nonnegative_int, default=0),
                close_look_conf=config.parameter("close_look_conf", unit_float, default=0.5),
                close_look_hint=config.parameter("close_look_hint", unit_float, default=0.0),
                close_look_window=config.parameter("close_look_window", nonnegative_float, default=3.0),
                close_look_doubts=config.parameter("close_look_doubts", nonnegative_int, default=1),
                whole_plates=config.parameter("whole_plates", yes_no, default=True),
            )
        except ValueError as error:
            raise ModelConfigError(f"model 'yolo': {error}") from error
        self.crop_variants = variants(
            config.parameter("crop_vertical_pads", float_list), config.parameter("crop_horizontal_margins", float_list)
        )
        self.two_line_layout = config.parameter("two_line_layout", two_line_layout, default="side-by-side")
        self.two_line_aspect = config.parameter("two_line_aspect", nonnegative_float, default=0.0)
        self.level_below = config.parameter("level_below", nonnegative_float, default=0.0)
        threads = config.parameter("threads", nonnegative_int, default=0)
        cuda_graphs = config.parameter("cuda_graphs", yes_no, default=False)
        try:
            self.detector = PlateDetector(
                weights,
                device=str(device),
                settings=settings,
                threads=threads,
                runtime=format,
                precision=precision,
                cuda_graphs=cuda_graphs,
            )
        except ValueError as error:
            raise ModelConfigError(f"model 'yolo': {error}") from error

    def detect(self, image: torch.Tensor) -> tuple[np.ndarray, Detections]:
        """The photo (HWC BGR uint8, on any device) as checked host pixels, and its plates."""
        pixels = check_image(image.cpu().numpy(), what="input__0")
        return pixels, self.detector.detect(pixels)

    def cut(self, pixels: np.ndarray, detections: Detections) -> dict[str, torch.Tensor]:
        """The model's outputs, one of each for every way to read a plate (ways_to_read), plate by plate: its crops
        (its variants one after the other), box, the plate's score, the rows of 94x24 each crop holds, and the plate
        it reads."""
        tilts = box_tilts(pixels, detections.boxes, detections.lines, self.level_below)
        ways = ways_to_read(detections.boxes, detections.lines, self.two_line_aspect, pixels.shape[0], tilts)
        crops = prepare_crops(pixels, ways.boxes, self.crop_variants, ways.rows, self.two_line_layout, ways.tilts)
        return {
            "output__0": torch.from_numpy(crops).to(self.device),
            "output__1": torch.from_numpy(ways.boxes).to(self.device),
            "output__2": torch.from_numpy(detections.scores[ways.plate_of]).to(self.device),
            "output__3": torch.from_numpy(crop_rows(ways.rows, self.two_line_layout)).to(self.device),
            "output__4": torch.from_numpy(ways.plate_of).to(self.device),
        }
