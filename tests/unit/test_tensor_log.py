"""plates.inference.tensor_log: where each tensor crossing a model lies, counted per process and summed across them."""

import json

import numpy as np
import torch

from plates.inference.tensor_log import CPU, EMPTY, GPU, LOG_VARIABLE, Crossing, TensorLog, memory_of, read_log


class TritonTensor:
    """A Triton tensor as the Python backend gives one: its name, shape and memory through methods."""

    def __init__(self, name, shape, on_gpu):
        self._name, self._shape, self._on_gpu = name, shape, on_gpu

    def name(self):
        return self._name

    def shape(self):
        return self._shape

    def is_cpu(self):
        return not self._on_gpu


def OnTheGpu(name, shape):
    return TritonTensor(name, shape, on_gpu=True)


def test_memory_is_read_from_triton_tensors_torch_tensors_and_arrays_and_an_empty_tensor_holds_none():
    assert memory_of(OnTheGpu("output__0", [2, 3, 24, 94])) == GPU
    assert memory_of(TritonTensor("image_bytes", [1], on_gpu=False)) == CPU
    assert memory_of(torch.zeros(2, 3)) == CPU
    assert memory_of(np.zeros((2, 3), np.float32)) == CPU
    assert memory_of(OnTheGpu("output__1", [0, 4])) == memory_of(torch.zeros(0, 4)) == EMPTY


def test_counts_are_written_per_process_and_summed_by_model_way_tensor_and_memory(tmp_path, monkeypatch):
    monkeypatch.setenv(LOG_VARIABLE, str(tmp_path))
    first, second = TensorLog.from_environment("stn"), TensorLog.from_environment("stn")
    for log in (first, second):
        log.count_all("received", [OnTheGpu("input__0", [2, 3, 24, 94])] * 2)
    first.count("decoded", torch.zeros(4, 4, 3), "image_bytes")
    first.write().rename(tmp_path / "stn.1.json")  # two instances of a model: two processes, two files
    second.write()
    assert read_log(tmp_path) == [
        Crossing("stn", "decoded", "image_bytes", CPU, 1),
        Crossing("stn", "received", "input__0", GPU, 4),
    ]
    assert json.loads(next(tmp_path.glob("stn.[0-9]*.json")).read_text())["model"] == "stn"


def test_without_the_variable_nothing_is_counted_or_written(monkeypatch):
    monkeypatch.delenv(LOG_VARIABLE, raising=False)
    log = TensorLog.from_environment("yolo")
    log.count("sent", OnTheGpu("output__0", [1]))
    assert not log.counts and log.write() is None
