"""Triton adapter for the plate detector: BGR photo in; crops, boxes and scores out. Logic:
plates.serving.detector_model."""

import json
from pathlib import Path

import triton_python_backend_utils as pb_utils

from plates.serving.detector_model import DetectorModel
from plates.serving.model_config import ModelConfig
from plates.serving.triton_adapter import answer_each, instance_device, to_torch, to_triton


class TritonPythonModel:
    def initialize(self, args):
        config = ModelConfig(json.loads(args["model_config"]))
        version_folder = Path(args["model_repository"]) / args["model_version"]
        self.model = DetectorModel(config, version_folder, instance_device(args))

    def execute(self, requests):
        return answer_each(pb_utils, "yolo", requests, self._outputs)

    def _outputs(self, request):
        image = to_torch(pb_utils.get_input_tensor_by_name(request, "input__0"))
        outputs = self.model.cut(*self.model.detect(image))
        return [to_triton(pb_utils, name, tensor) for name, tensor in outputs.items()]
