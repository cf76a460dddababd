"""A small stand-in for `triton_python_backend_utils`, enough to run the model.py adapters without a server.

Tensors carry torch data and cross `to_dlpack`/`from_dlpack` like the real ones; `as_numpy` is deliberately absent
on tensors that came through DLPack, so an adapter that reaches for it between models fails here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch.utils import dlpack


class TritonError:
    INVALID_ARG, INTERNAL, UNAVAILABLE, NOT_FOUND, UNSUPPORTED, ALREADY_EXISTS, CANCELLED = range(7)

    def __init__(self, message: str, code: int = 1) -> None:
        self._message, self._code = message, code

    def message(self) -> str:
        return self._message

    def code(self) -> int:
        return self._code


class Tensor:
    def __init__(self, name: str, data: np.ndarray) -> None:
        self._name, self._data = name, data

    def name(self) -> str:
        return self._name

    def shape(self) -> list[int]:
        return list(self._data.shape)

    def is_cpu(self) -> bool:
        return not (isinstance(self._data, torch.Tensor) and self._data.is_cuda)

    def as_numpy(self) -> np.ndarray:
        if isinstance(self._data, torch.Tensor):
            raise AssertionError(f"as_numpy() on DLPack tensor '{self._name}': tensors between models use DLPack")
        return self._data

    def numpy(self) -> np.ndarray:
        """For the tests' eyes only: the data, however it arrived."""
        return self._data.numpy() if isinstance(self._data, torch.Tensor) else self._data

    def to_dlpack(self) -> Any:
        data = self._data
        if not isinstance(data, torch.Tensor):
            data = torch.from_numpy(np.ascontiguousarray(data))
        return dlpack.to_dlpack(data)

    @staticmethod
    def from_dlpack(name: str, capsule: Any) -> Tensor:
        return Tensor(name, dlpack.from_dlpack(capsule))


class InferenceResponse:
    def __init__(self, output_tensors: list[Tensor] | None = None, error: TritonError | None = None) -> None:
        self.output_tensors = output_tensors or []
        self._error = error

    def has_error(self) -> bool:
        return self._error is not None

    def error(self) -> TritonError | None:
        return self._error


# model name -> function(inputs by name) -> InferenceResponse; tests fill it
MODELS: dict[str, Callable[[dict[str, Tensor]], InferenceResponse]] = {}
CALLS: list[str] = []


class InferenceRequest:
    def __init__(self, model_name: str, inputs: list[Tensor], requested_output_names: list[str], **_: Any) -> None:
        self.model_name, self.inputs, self.requested_output_names = model_name, inputs, requested_output_names

    def exec(self) -> InferenceResponse:
        CALLS.append(self.model_name)
        return MODELS[self.model_name]({t.name(): t for t in self.inputs})


class Logger:
    messages: list[str] = []

    @classmethod
    def log_error(cls, message: str) -> None:
        cls.messages.append(message)

    log_info = log_warn = log_verbose = log_error


def get_input_tensor_by_name(request: Any, name: str) -> Tensor | None:
    return {t.name(): t for t in request.inputs}.get(name)


def get_output_tensor_by_name(response: InferenceResponse, name: str) -> Tensor | None:
    return {t.name(): t for t in response.output_tensors}.get(name)
