"""Triton adapter for the orchestrator (BLS): calls yolo, stn and lprnet. Logic: plates.inference.pipeline."""

import json
from functools import partial

import numpy as np
import triton_python_backend_utils as pb_utils

from plates.exceptions import sub_model_error
from plates.inference.model_config import ModelConfig
from plates.inference.pipeline import RecognitionSettings, recognize
from plates.inference.stubs import SiblingStubs
from plates.inference.tensor_log import TensorLog
from plates.inference.triton_adapter import ReceivedPhoto, answer_each, to_torch


def infer(siblings, log, received, model, inputs, outputs):
    """Every sub-request of the request that brought `received` goes through here: call, check the error, return
    the outputs by name. `siblings` tells a dead sub-model from a busy one (plates.inference.stubs.SiblingStubs);
    `log` counts where each tensor each way lies (plates.inference.tensor_log)."""
    sent = [received.to_triton(pb_utils, name, tensor) for name, tensor in inputs.items()]
    log.count_all(f"to {model}", sent)
    response = pb_utils.InferenceRequest(model_name=model, inputs=sent, requested_output_names=outputs).exec()
    if response.has_error():
        raise sub_model_error(model, response.error().message(), partial(siblings.exited, model))
    siblings.answered(model)
    answers = [pb_utils.get_output_tensor_by_name(response, name) for name in outputs]
    log.count_all(f"from {model}", answers)
    return {name: to_torch(tensor) for name, tensor in zip(outputs, answers)}


class TritonPythonModel:
    def initialize(self, args):
        config = ModelConfig(json.loads(args["model_config"]))
        config.tensor("input", "input__0", "TYPE_UINT8", [-1, -1, 3])
        config.tensor("input", "image_bytes", "TYPE_STRING", [1])
        config.tensor("output", "coordinates", "TYPE_FP32", [-1, 4])
        config.tensor("output", "texts", "TYPE_STRING", [-1])
        config.tensor("output", "scores", "TYPE_FP32", [-1])
        config.tensor("output", "text_scores", "TYPE_FP32", [-1])
        config.tensor("output", "candidates", "TYPE_STRING", [-1, -1])
        config.tensor("output", "candidate_scores", "TYPE_FP32", [-1, -1])
        self.settings = RecognitionSettings.from_config(config)
        self.siblings = SiblingStubs()
        self.log = TensorLog.from_environment(config.name)

    def execute(self, requests):
        return answer_each(pb_utils, "plate_recognition", requests, self._outputs)

    def finalize(self):
        self.log.write()

    def _outputs(self, request):
        received = ReceivedPhoto.of(pb_utils, request)
        self.log.count_all("received", received.tensors.values())
        plates = recognize(received.photo, partial(infer, self.siblings, self.log, received), self.settings)
        return [
            pb_utils.Tensor("coordinates", plates.boxes),
            pb_utils.Tensor("texts", np.array([t.encode() for t in plates.texts], dtype=np.object_)),
            pb_utils.Tensor("scores", plates.scores),
            pb_utils.Tensor("text_scores", plates.text_scores),
            pb_utils.Tensor("candidates", np.vectorize(str.encode, otypes=[np.object_])(plates.candidates)),
            pb_utils.Tensor("candidate_scores", plates.candidate_scores),
        ]
