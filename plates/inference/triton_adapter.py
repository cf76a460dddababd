"""The few things every `model.py` does with Triton objects: tensors in and out through DLPack, and error responses.

`pb_utils` (triton_python_backend_utils) exists only inside the Python backend's stub, so it is passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.utils import dlpack

from plates.exceptions import PlatesError
from plates.inference.model_config import ModelConfig, nonnegative_int
from plates.inference.photo_input import FILE, PIXELS, Photo, photo_input


def to_torch(tensor: Any) -> torch.Tensor:
    """A Triton tensor as a torch tensor on the same device, sharing its memory."""
    return dlpack.from_dlpack(tensor.to_dlpack())


def c_order(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` with the exact row-major strides Triton's DLPack import demands, copying only if it lacks them.

    torch calls a tensor contiguous even when its empty or size-1 dimensions carry other strides (numpy gives an
    empty array zero strides); Triton rejects those.
    """
    expected, step = [], 1
    for size in reversed(tensor.shape):
        expected.insert(0, step)
        step *= max(size, 1)
    if list(tensor.stride()) == expected:
        return tensor
    return torch.empty(tensor.shape, dtype=tensor.dtype, device=tensor.device).copy_(tensor)


def to_triton(pb_utils: Any, name: str, tensor: torch.Tensor | np.ndarray) -> Any:
    """A torch tensor as a Triton tensor named `name`, on the same device, sharing its memory where it can; a numpy
    array (BYTES, which DLPack cannot carry) as a host tensor."""
    if isinstance(tensor, np.ndarray):
        return pb_utils.Tensor(name, tensor)
    if tensor.numel() == 0:
        # Nothing to keep on a GPU, and a GPU tensor of no element has a null pointer, which DLPack readers and CUDA
        # IPC refuse (pytorch#41182, triton-inference-server#4865): yolo's outputs for a photo with no plate.
        tensor = tensor.cpu()
    tensor = c_order(tensor)
    if tensor.is_cuda:
        # A DLPack capsule carries no stream: its reader, another process through Triton, reads the memory at once,
        # so the kernels that write it must have run.
        torch.cuda.current_stream(tensor.device).synchronize()
    return pb_utils.Tensor.from_dlpack(name, dlpack.to_dlpack(tensor))


@dataclass(frozen=True)
class ReceivedPhoto:
    """The photo a request carries in input__0 or image_bytes (plates.inference.photo_input), and the Triton tensors it
    came in, by name."""

    photo: Photo
    tensors: dict[str, Any]

    @classmethod
    def of(cls, pb_utils: Any, request: Any) -> ReceivedPhoto:
        tensors = {
            name: tensor
            for name in (PIXELS, FILE)
            if (tensor := pb_utils.get_input_tensor_by_name(request, name)) is not None
        }
        pixels, encoded = tensors.get(PIXELS), tensors.get(FILE)
        photo = photo_input(
            None if pixels is None else to_torch(pixels), None if encoded is None else encoded.as_numpy()
        )
        return cls(photo, tensors)

    def to_triton(self, pb_utils: Any, name: str, tensor: torch.Tensor | np.ndarray) -> Any:
        """`tensor` as a Triton tensor for a sub-request (to_triton), except the photo itself: that goes on as the
        tensor it came in, which already lies in the memory the stub shares with the server, where a new tensor
        made from it would be copied into that memory again (6.2 MB for a 1080p frame's pixels; docs/performance.md)."""
        if self.photo.get(name) is tensor:
            return self.tensors[name]
        return to_triton(pb_utils, name, tensor)


def triton_code(pb_utils: Any, error: BaseException) -> Any:
    name = error.triton_code if isinstance(error, PlatesError) else "INTERNAL"
    return getattr(pb_utils.TritonError, name)


def instance_device(args: dict[str, str]) -> torch.device:
    """The device of the model instance `initialize` was called for."""
    if args["model_instance_kind"] == "GPU":
        return torch.device(f"cuda:{args['model_instance_device_id']}")
    return torch.device("cpu")


def answer_each(pb_utils: Any, model: str, requests: list[Any], outputs_of: Callable[[Any], list[Any]]) -> list[Any]:
    """One response per request, in order: `outputs_of(request)`'s tensors, or an error response if it raised."""
    responses = []
    for request in requests:
        try:
            responses.append(pb_utils.InferenceResponse(output_tensors=outputs_of(request)))
        except Exception as error:  # an error is answered, never raised: the other requests still get theirs
            pb_utils.Logger.log_error(f"{model}: {type(error).__name__}: {error}")
            responses.append(error_response(pb_utils, model, error))
    return responses


def error_response(pb_utils: Any, model: str, error: BaseException) -> Any:
    """An error response naming the model; our own errors keep their code, anything else is INTERNAL."""
    if isinstance(error, PlatesError):
        message = f"{model}: {error}"
    else:
        message = f"{model}: internal error: {type(error).__name__}: {error}"
    return pb_utils.InferenceResponse(error=pb_utils.TritonError(message, triton_code(pb_utils, error)))


def set_intra_op_threads(config: ModelConfig) -> None:
    """Run PyTorch on the threads the PyTorch backend's parameter INTRA_OP_THREAD_COUNT says (0 or absent: PyTorch's
    default). They are the process's: the real backend applies the first model's value to all its models."""
    threads = config.parameter("INTRA_OP_THREAD_COUNT", nonnegative_int, default=0)
    if threads:
        torch.set_num_threads(threads)
