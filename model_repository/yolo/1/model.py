"""Triton adapter for the plate detector: BGR photo in; crops, boxes and scores out. Logic: plates.detection."""

import json
from pathlib import Path

import torch
import triton_python_backend_utils as pb_utils

from plates.detection import DETECTOR_FILES, DetectorSettings, PlateDetector, detector_format
from plates.exceptions import ModelConfigError
from plates.images import check_image
from plates.recognition.crops import prepare_crops, variants
from plates.serving.model_config import (
    ModelConfig,
    float_list,
    positive_int,
    positive_int_list,
    unit_float,
    unit_float_list,
)
from plates.serving.triton_adapter import answer_each, instance_device, to_torch, to_triton


class TritonPythonModel:
    def initialize(self, args):
        config = ModelConfig(json.loads(args["model_config"]))
        config.tensor("input", "input__0", "TYPE_UINT8", [-1, -1, 3])
        config.tensor("output", "output__0", "TYPE_FP32", [-1, 3, 24, 94])
        config.tensor("output", "output__1", "TYPE_FP32", [-1, 4])
        config.tensor("output", "output__2", "TYPE_FP32", [-1])
        self.device = instance_device(args)
        format = config.parameter("format", detector_format)
        if format == "onnx" and self.device.type != "cpu":
            # ONNX Runtime's CPU build is the one installed: Ultralytics would pip-install onnxruntime-gpu here.
            raise ModelConfigError(
                f"model 'yolo': format 'onnx' runs on the CPU only; set parameter 'format' to 'torch' for {self.device}"
            )
        weights = Path(args["model_repository"]) / args["model_version"] / DETECTOR_FILES[format]
        if not weights.is_file():
            raise FileNotFoundError(f"model 'yolo': weights {weights} not found; run convert/build_model_repository.py")
        try:
            settings = DetectorSettings(
                imgsz=tuple(config.parameter("imgsz", positive_int_list)),
                conf=tuple(config.parameter("conf", unit_float_list)),
                iou=config.parameter("iou", unit_float),
                max_det=config.parameter("max_det", positive_int),
            )
        except ValueError as error:
            raise ModelConfigError(f"model 'yolo': {error}") from error
        self.crop_variants = variants(
            config.parameter("crop_vertical_pads", float_list), config.parameter("crop_horizontal_margins", float_list)
        )
        self.detector = PlateDetector(weights, device=str(self.device), settings=settings)

    def execute(self, requests):
        return answer_each(pb_utils, "yolo", requests, self._outputs)

    def _outputs(self, request):
        image = to_torch(pb_utils.get_input_tensor_by_name(request, "input__0"))
        image = check_image(image.cpu().numpy(), what="input__0")
        detections = self.detector.detect(image)
        crops = torch.from_numpy(prepare_crops(image, detections.boxes, self.crop_variants)).to(self.device)
        return [
            to_triton(pb_utils, "output__0", crops),
            to_triton(pb_utils, "output__1", torch.from_numpy(detections.boxes).to(self.device)),
            to_triton(pb_utils, "output__2", torch.from_numpy(detections.scores).to(self.device)),
        ]
