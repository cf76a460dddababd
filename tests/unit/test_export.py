import shutil

import pytest
import torch

from plates.exceptions import PlatesError, WeightsError
from plates.weights import PROJECT_ROOT
from plates.export import (
    DEFAULT_REPOSITORY,
    build_model_repository,
    set_detector_format,
    set_instance_kind,
    trace_checked,
)


def copy_sources(tmp_path):
    repository = tmp_path / "model_repository"
    shutil.copytree(DEFAULT_REPOSITORY, repository, ignore=shutil.ignore_patterns("*.pt", "*.onnx", "__pycache__"))
    return repository


def test_set_instance_kind_pins_every_model(tmp_path):
    repository = copy_sources(tmp_path)
    set_instance_kind(repository, "gpu")
    configs = sorted(repository.glob("*/config.pbtxt"))
    assert len(configs) == 4
    for config in configs:
        text = config.read_text()
        assert "kind: KIND_GPU" in text and "kind: KIND_AUTO" not in text


def test_set_detector_format_switches_the_yolo_model_and_nothing_else(tmp_path):
    repository = copy_sources(tmp_path)
    before = (repository / "yolo" / "config.pbtxt").read_text()
    set_detector_format(repository, "torch")
    after = (repository / "yolo" / "config.pbtxt").read_text()
    assert 'key: "format", value: { string_value: "onnx" }' in before
    assert after == before.replace('string_value: "onnx"', 'string_value: "torch"')
    with pytest.raises(ValueError, match="must be one of onnx, torch"):
        set_detector_format(repository, "engine")


def test_trace_checked_fails_when_the_trace_diverges():
    class Stochastic(torch.nn.Module):
        def forward(self, x):
            return x + torch.rand_like(x)  # a trace cannot reproduce this

    with pytest.raises(PlatesError, match=r"traced noisy differs from eager by"):
        trace_checked(Stochastic(), "noisy")


def test_build_stops_on_missing_weights_naming_the_file(tmp_path):
    with pytest.raises(WeightsError, match=r"weight file plates_stn.pt not found; looked in: .*empty"):
        build_model_repository(copy_sources(tmp_path), weights_dir=tmp_path / "empty")
    with pytest.raises(WeightsError, match=r"weight file stn.pth not found; looked in: .*empty"):
        build_model_repository(copy_sources(tmp_path / "b"), weights_dir=tmp_path / "empty", recognizer="pretrained")


def test_the_repositorys_own_weights_build_the_model_repository(tmp_path):
    # A fresh clone with no ../shared beside it builds and serves: weights/ holds every weight it serves.
    built = build_model_repository(copy_sources(tmp_path), weights_dir=PROJECT_ROOT / "weights")
    assert [path.name for path in built] == ["model.pt", "model.pt", "plate_detector.pt", "plate_detector.onnx"]
    assert all(path.is_file() for path in built)
