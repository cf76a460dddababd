"""A stand-in for Triton's PyTorch (libtorch) backend, for machines whose Triton has none (the nvidia-pytriton wheel).

Triton loads this file for every model whose config says `backend: "pytorch"` when it is found as
`<backend-directory>/pytorch/model.py`. It runs the model's TorchScript `model.pt` with torch.jit, the way the real
backend does: inputs `input__<i>` in, outputs `output__<i>` out, one batch per execute for dynamically batched
requests. `plates serve` uses it only when the backend directory has no real PyTorch backend; the serving image
never contains it.
"""

import json
from pathlib import Path

import torch
import triton_python_backend_utils as pb_utils

from plates.inference.model_config import ModelConfig
from plates.inference.tensor_log import TensorLog
from plates.inference.triton_adapter import error_response, instance_device, set_intra_op_threads, to_torch, to_triton


class TritonPythonModel:
    def initialize(self, args):
        config = ModelConfig(json.loads(args["model_config"]))
        self.name = config.name
        self.inputs = [entry["name"] for entry in config.raw["input"]]
        self.outputs = [entry["name"] for entry in config.raw["output"]]
        filename = config.raw.get("default_model_filename") or "model.pt"
        path = Path(args["model_repository"]) / args["model_version"] / filename
        self.device = instance_device(args)
        # Here each model has its own process, so each sets its own.
        set_intra_op_threads(config)
        self.model = torch.jit.load(str(path), map_location=self.device).eval()
        self.log = TensorLog.from_environment(self.name)

    def finalize(self):
        self.log.write()

    def execute(self, requests):
        # Dynamic batching hands several requests at once: run them as one batch, then split the outputs back.
        try:
            received = [[pb_utils.get_input_tensor_by_name(r, n) for n in self.inputs] for r in requests]
            for tensors in received:
                self.log.count_all("received", tensors)
            batches = [[to_torch(tensor) for tensor in tensors] for tensors in received]
            sizes = [batch[0].shape[0] for batch in batches]
            inputs = [torch.cat([batch[i] for batch in batches]).to(self.device) for i in range(len(self.inputs))]
            with torch.inference_mode():
                outputs = self.model(*inputs)
        except Exception as error:
            pb_utils.Logger.log_error(f"{self.name}: {type(error).__name__}: {error}")
            return [error_response(pb_utils, self.name, error) for _ in requests]
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        split = [torch.split(output, sizes) for output in outputs]
        sent = [
            [to_triton(pb_utils, name, parts[k]) for name, parts in zip(self.outputs, split)]
            for k in range(len(requests))
        ]
        for tensors in sent:
            self.log.count_all("sent", tensors)
        return [pb_utils.InferenceResponse(output_tensors=tensors) for tensors in sent]
