"""Triton adapter for the plate detector: a photo (BGR pixels or its file) in; crops, boxes and scores out. Logic:
plates.serving.detector_model."""

import json
from pathlib import Path

import triton_python_backend_utils as pb_utils

from plates.serving.detector_model import DetectorModel
from plates.serving.model_config import ModelConfig
from plates.serving.photo_input import photo_pixels
from plates.serving.triton_adapter import answer_each, instance_device, request_photo, to_triton


class TritonPythonModel:
    def initialize(self, args):
        config = ModelConfig(json.loads(args["model_config"]))
        version_folder = Path(args["model_repository"]) / args["model_version"]
        self.model = DetectorModel(config, version_folder, instance_device(args))
        pb_utils.Logger.log_info(f"yolo: the detector runs on {self.model.format}, in {self.model.detector.precision}")

    def execute(self, requests):
        return answer_each(pb_utils, "yolo", requests, self._outputs)

    def _outputs(self, request):
        image = photo_pixels(request_photo(pb_utils, request), self.model.device)
        outputs = self.model.cut(*self.model.detect(image))
        return [to_triton(pb_utils, name, tensor) for name, tensor in outputs.items()]
