"""Triton adapter for the plate detector: a photo (BGR pixels or its file) in; crops, boxes and scores out. Logic:
plates.inference.detector_model."""

import json
from pathlib import Path

import triton_python_backend_utils as pb_utils

from plates.inference.detector_model import DetectorModel
from plates.inference.model_config import ModelConfig
from plates.inference.photo_input import FILE, photo_pixels
from plates.inference.tensor_log import TensorLog
from plates.inference.triton_adapter import ReceivedPhoto, answer_each, instance_device, to_triton


class TritonPythonModel:
    def initialize(self, args):
        config = ModelConfig(json.loads(args["model_config"]))
        version_folder = Path(args["model_repository"]) / args["model_version"]
        self.model = DetectorModel(config, version_folder, instance_device(args))
        self.log = TensorLog.from_environment(config.name)
        detector = self.model.detector
        pb_utils.Logger.log_info(
            f"yolo: the detector runs on {self.model.format}, in {detector.precision}, on {detector.device}"
        )

    def execute(self, requests):
        return answer_each(pb_utils, "yolo", requests, self._outputs)

    def finalize(self):
        self.log.write()

    def _outputs(self, request):
        received = ReceivedPhoto.of(pb_utils, request)
        self.log.count_all("received", received.tensors.values())
        image = photo_pixels(received.photo, self.model.device)
        if FILE in received.photo:
            self.log.count("decoded", image, FILE)
        cut = self.model.cut(*self.model.detect(image))
        outputs = [to_triton(pb_utils, name, tensor) for name, tensor in cut.items()]
        self.log.count_all("sent", outputs)
        return outputs
