"""Triton adapter for the plate detector: BGR photo in; crops, boxes and scores out. Logic: plates.detection."""

import json
from pathlib import Path

import torch
import triton_python_backend_utils as pb_utils

from plates.detection import DetectorSettings, PlateDetector
from plates.images import check_image
from plates.recognition.crops import prepare_crops, variants
from plates.serving.model_config import ModelConfig, float_list, positive_int, unit_float
from plates.serving.triton_adapter import error_response, to_torch, to_triton


class TritonPythonModel:
    def initialize(self, args):
        config = ModelConfig(json.loads(args["model_config"]))
        config.tensor("input", "input__0", "TYPE_UINT8", [-1, -1, 3])
        config.tensor("output", "output__0", "TYPE_FP32", [-1, 3, 24, 94])
        config.tensor("output", "output__1", "TYPE_FP32", [-1, 4])
        config.tensor("output", "output__2", "TYPE_FP32", [-1])
        weights = Path(args["model_repository"]) / args["model_version"] / config.parameter("weights", str)
        if not weights.is_file():
            raise FileNotFoundError(f"model 'yolo': weights {weights} not found; run convert/build_model_repository.py")
        settings = DetectorSettings(
            imgsz=config.parameter("imgsz", positive_int),
            conf=config.parameter("conf", unit_float),
            iou=config.parameter("iou", unit_float),
            max_det=config.parameter("max_det", positive_int),
        )
        self.crop_variants = variants(
            config.parameter("crop_vertical_pads", float_list), config.parameter("crop_horizontal_margins", float_list)
        )
        gpu = args["model_instance_kind"] == "GPU"
        self.device = torch.device(f"cuda:{args['model_instance_device_id']}" if gpu else "cpu")
        self.detector = PlateDetector(weights, device=str(self.device), settings=settings)
        self.logger = pb_utils.Logger

    def execute(self, requests):
        return [self._answer(request) for request in requests]

    def _answer(self, request):
        try:
            image = to_torch(pb_utils.get_input_tensor_by_name(request, "input__0"))
            image = check_image(image.cpu().numpy(), what="input__0")
            detections = self.detector.detect(image)
            crops = torch.from_numpy(prepare_crops(image, detections.boxes, self.crop_variants)).to(self.device)
            outputs = [
                to_triton(pb_utils, "output__0", crops),
                to_triton(pb_utils, "output__1", torch.from_numpy(detections.boxes).to(self.device)),
                to_triton(pb_utils, "output__2", torch.from_numpy(detections.scores).to(self.device)),
            ]
            return pb_utils.InferenceResponse(output_tensors=outputs)
        except Exception as error:  # one response per request, always: an error is answered, not raised
            self.logger.log_error(f"yolo: {type(error).__name__}: {error}")
            return error_response(pb_utils, "yolo", error)
